import { exchangeTarget } from '../amqp/dead-letter-exchange.js';
import type { EngineContext } from '../context.js';
import {
  copiedMessage,
  copyOutcomes,
  type DeadLettered,
  type DeadLetterRule,
  type DeadLetterTarget,
} from '../store/dead-letters.js';
import type { DeathReason, NewMessage, QueueRecord, StoredMessage } from '../types.js';
import { queueTarget } from './dead-letter-queue.js';

/**
 * The one road of every dead letter, as RabbitMQ's rabbit_dead_letter is: a receive past
 * maxReceiveCount (`delivery_limit`), an AMQP reject or nack (`rejected`), a returned
 * delivery past the delivery limit (`delivery_limit`), a TTL passing (`expired`) and a
 * length limit pushing a message out (`maxlen`) all ask deadLetterTarget, with the
 * queue's settings in force, how the queue's messages are dead-lettered.
 *
 * The answer is a target the store applies inside the operation's transaction, or
 * undefined: the message is dropped. Its `arrival` says, per message, what happens:
 * - `move`: into the dead-letter queue (dead-letter-queue.ts);
 * - `cycle`: into the cycles queue, as going on would close a cycle with no rejection;
 * - `copies`: through the AMQP dead-letter exchange, a copy into every queue it routes
 *   to, none when it routes nowhere (amqp/dead-letter-exchange.ts).
 * What the store did comes back as DeadLettered entries, which the engine reports once
 * the operation has committed (report.ts).
 */
export async function deadLetterTarget(
  engine: EngineContext,
  queue: QueueRecord,
  reason: DeathReason,
  rejectReason?: string,
): Promise<DeadLetterTarget | undefined> {
  const settings = engine.settingsOf(queue);
  // An AMQP dead-letter exchange, when the queue has one, replaces its target queue.
  if (settings.deadLetterExchange !== undefined) return exchangeTarget(engine, queue, settings, reason);
  return queueTarget(engine, queue, settings, reason, rejectReason);
}

/** How the receive path dead-letters messages received more than maxReceiveCount times. */
export async function deadLetterRule(engine: EngineContext, queue: QueueRecord): Promise<DeadLetterRule | undefined> {
  const max = engine.settingsOf(queue).maxReceiveCount;
  if (max === undefined) return undefined;
  const target = await deadLetterTarget(engine, queue, 'delivery_limit');
  return target && { ...target, maxReceiveCount: max };
}

/**
 * reject-publish-dlx: publishes a full queue refused are dead-lettered (`maxlen`) through
 * its dead-letter exchange, if it has one, else dropped. They were never stored, so each
 * copy is a send to its queue, after the refusal.
 */
export async function deadLetterRefused(
  engine: EngineContext,
  queue: QueueRecord,
  refused: StoredMessage[],
): Promise<void> {
  const settings = engine.settingsOf(queue);
  if (settings.deadLetterExchange === undefined) return;
  const target = await exchangeTarget(engine, queue, settings, 'maxlen');
  const now = engine.clock.now();
  const byQueue = new Map<number, NewMessage[]>();
  const outcomes: DeadLettered[] = [];
  for (const m of refused) {
    const stored: StoredMessage = { ...m, queueId: queue.id, receiveCount: 0 };
    const a = target.arrival(stored);
    for (const c of a.copies)
      byQueue.set(c.queueId, [...(byQueue.get(c.queueId) ?? []), copiedMessage(stored, a, c, now)]);
    outcomes.push(...copyOutcomes(stored, a, 'maxlen'));
  }
  for (const [queueId, messages] of byQueue) await engine.store.messages.send(queueId, messages);
  engine.deadLettered(queue, outcomes);
}
