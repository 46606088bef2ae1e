import { deadLetterRefused, lengthLimit } from '../dead-letters/road.js';
import type { AmqpEngine } from './amqp-engine.js';
import type { NewMessage, QueueRecord } from '../kernel/types.js';
import { amqpErrors } from '../kernel/amqp-errors.js';
import type { AmqpExchanges } from './exchanges.js';
import { toNewMessage, type AmqpContent, type PublishExtras } from './messages.js';
import { route } from '../routing/routing.js';

export interface Publish extends PublishExtras {
  content: AmqpContent;
  /** The message's own TTL (property `expiration`). */
  expirationMs?: number;
}

export interface PublishResult {
  /** Queues the message was stored in. */
  routed: number;
  /** A queue's length limit refused it (reject-publish): publisher confirms answer nack. */
  refused: boolean;
}

/** Throws RabbitMQ's error for a publish to `exchange`: 404 if it does not exist, 403 if it is internal. */
export async function publishable(exchanges: AmqpExchanges, exchange: string): Promise<void> {
  const x = await exchanges.existing(exchange);
  if (x.internal) throw amqpErrors.accessRefused(`cannot publish to internal exchange '${x.name}' in vhost '/'`);
}

/**
 * Routes publishes of one channel, in order, and stores them with one send per queue
 * (a channel that publishes faster than the store commits has its publishes batched, as
 * SQS batches sends). A publish that fails (an exchange that does not exist) ends the
 * batch: those before it are stored and reported, and the error is returned for the
 * channel to raise, as if it had come one at a time.
 */
export async function publishBatch(
  engine: AmqpEngine,
  exchanges: AmqpExchanges,
  accountId: string,
  batch: Publish[],
): Promise<{ results: PublishResult[]; error?: unknown }> {
  const queues = new Map<string, QueueRecord | undefined>();
  const perQueue = new Map<number, { queue: QueueRecord; messages: NewMessage[]; owners: number[] }>();
  const results: PublishResult[] = [];
  let error: unknown;
  for (const [i, p] of batch.entries()) {
    try {
      await publishable(exchanges, p.content.exchange);
      const keys = [...(p.cc ?? []), ...(p.bcc ?? [])];
      for (const name of await route(
        exchanges,
        p.content.exchange,
        { routingKey: p.content.routingKey, headers: p.headers },
        keys,
      )) {
        if (!queues.has(name))
          queues.set(name, await engine.store.queues.get({ accountId, region: engine.region, name }));
        const queue = queues.get(name);
        // FIFO queues need a group id, which AMQP does not have: they are not routed to.
        if (!queue || queue.fifo) continue;
        const group = perQueue.get(queue.id) ?? { queue, messages: [], owners: [] };
        perQueue.set(queue.id, group);
        group.messages.push(toNewMessage(engine, queue, accountId, p.content, p.expirationMs, p));
        group.owners.push(i);
      }
      results.push({ routed: 0, refused: false });
    } catch (e) {
      error = e;
      break;
    }
  }
  for (const { queue, messages, owners } of perQueue.values()) {
    const { messages: stored, deadLettered } = await engine.store.messages.send(
      queue.id,
      messages,
      await lengthLimit(engine, queue),
    );
    engine.deadLettered(queue, deadLettered);
    const refused = stored.filter((m) => m.rejected);
    if (stored.length > refused.length) engine.observer.sent(queue, stored.length - refused.length);
    if (refused.length && engine.settingsOf(queue).overflow === 'reject-publish-dlx')
      await deadLetterRefused(engine, queue, refused);
    stored.forEach((m, k) => {
      const r = results[owners[k]!]!;
      if (m.rejected) r.refused = true;
      else r.routed++;
    });
  }
  return { results, error };
}
