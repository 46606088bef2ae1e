import type { EngineContext } from '../context/engine-context.js';
import type { DeathReason, NewMessage, QueueRecord, StoredMessage } from '../kernel/types.js';
import type { DeadLetterSettings } from '../policies/dead-letter-settings.js';
import {
  copiedMessage,
  copyOutcomes,
  type DeadLettered,
  type DeadLetterRule,
  type DeadLetterTarget,
  type LengthLimit,
  type RejectResult,
} from '../store/dead-letters.js';
import type { ReceiptRef } from '../store/receipts.js';
import { exchangeTarget } from './dead-letter-exchange.js';
import { queueTarget } from './dead-letter-queue.js';

/**
 * The one road of every dead letter, as RabbitMQ's rabbit_dead_letter is. Every trigger
 * enters here, and nowhere else decides where a dead letter goes:
 *
 * | trigger                                   | reason           | entry            |
 * |-------------------------------------------|------------------|------------------|
 * | receive past maxReceiveCount              | `delivery_limit` | receiveRule      |
 * | AMQP reject/nack, RejectMessage           | `rejected`       | deadLetterHeld   |
 * | AMQP requeue past the delivery limit      | `delivery_limit` | deadLetterHeld   |
 * | TTL passed                                | `expired`        | expireDue        |
 * | length limit, drop-head                   | `maxlen`         | lengthLimit      |
 * | length limit, reject-publish-dlx          | `maxlen`         | deadLetterRefused|
 *
 * Each asks deadLetterTarget, with the queue's settings in force, where the queue's dead
 * letters go: a target the store applies inside the operation's own transaction, or
 * undefined (dropped, as RabbitMQ drops a dead letter with nowhere to go). A target's
 * `arrival` says per message which of its kinds applies: `move` into the dead-letter
 * queue (dead-letter-queue.ts), `cycle` into the cycles queue, as going on would close a
 * cycle with no rejection, or `copies` through an AMQP dead-letter exchange
 * (dead-letter-exchange.ts). Receive and send dead-letter in the middle of their own
 * store operation, so for those two the road hands the store the target, and the store
 * executes it without deciding anything (store/dead-letters.ts `overReceiveLimit`); the
 * rest are whole operations here. What the store did comes back as DeadLettered entries,
 * which are reported once committed (`EngineContext.deadLettered`, report.ts).
 */
export async function deadLetterTarget(
  ctx: EngineContext,
  queue: QueueRecord,
  reason: DeathReason,
  rejectReason?: string,
): Promise<DeadLetterTarget | undefined> {
  const settings = ctx.settingsOf(queue);
  // An AMQP dead-letter exchange, when the queue has one, replaces its target queue.
  if (settings.deadLetterExchange !== undefined) return exchangeTarget(ctx, queue, settings, reason);
  return queueTarget(ctx, queue, settings, reason, rejectReason);
}

/** How a receive dead-letters the messages received more than maxReceiveCount times. */
export async function receiveRule(ctx: EngineContext, queue: QueueRecord): Promise<DeadLetterRule | undefined> {
  const max = ctx.settingsOf(queue).maxReceiveCount;
  if (max === undefined) return undefined;
  const target = await deadLetterTarget(ctx, queue, 'delivery_limit');
  return target && { ...target, maxReceiveCount: max };
}

/**
 * The queue's length limit with where drop-head sends what it pushes out, if it has one;
 * undefined at once for a queue without one (most), so a send need not wait for nothing.
 */
export function lengthLimit(ctx: EngineContext, queue: QueueRecord): Promise<LengthLimit> | undefined {
  const s = ctx.settingsOf(queue);
  if (s.maxLength === undefined && s.maxLengthBytes === undefined) return undefined;
  return limitOf(ctx, queue, s);
}

async function limitOf(ctx: EngineContext, queue: QueueRecord, s: DeadLetterSettings): Promise<LengthLimit> {
  const deadLetter = s.overflow === 'drop-head' ? await deadLetterTarget(ctx, queue, 'maxlen') : undefined;
  // reject-publish-dlx refuses as reject-publish does; deadLetterRefused then copies what was refused.
  return {
    maxMessages: s.maxLength,
    maxBytes: s.maxLengthBytes,
    overflow: s.overflow === 'drop-head' ? 'drop-head' : 'reject-publish',
    deadLetter,
  };
}

/**
 * Dead-letters a message its receiver holds (the receipt must be current): into the
 * target, or, with none, dropped (`withoutTarget: 'drop'`, AMQP as RabbitMQ does) or left
 * in flight (`'refuse'`, SQS's RejectMessage, which never loses a message): then the
 * answer is undefined and nothing changed.
 */
export async function deadLetterHeld(
  ctx: EngineContext,
  queue: QueueRecord,
  receipt: ReceiptRef,
  reason: DeathReason,
  opts: { withoutTarget: 'refuse'; rejectReason?: string } | { withoutTarget: 'drop'; messageId: string },
): Promise<RejectResult | undefined> {
  const rejectReason = opts.withoutTarget === 'refuse' ? opts.rejectReason : undefined;
  const target = await deadLetterTarget(ctx, queue, reason, rejectReason);
  const now = ctx.clock.now();
  if (target) {
    const result = await ctx.store.deadLetters.reject(queue.id, receipt, now, target);
    ctx.deadLettered(queue, result.deadLettered);
    return result;
  }
  if (opts.withoutTarget === 'refuse') return undefined;
  const [outcome] = await ctx.store.messages.delete(queue.id, [receipt], { now, requireCurrent: true });
  const deadLettered: DeadLettered[] =
    outcome === 'ok' ? [{ kind: 'dropped', messageId: opts.messageId, from: queue.id, reason }] : [];
  ctx.deadLettered(queue, deadLettered);
  return { outcome: outcome!, deadLettered };
}

/**
 * One batch of expiry: up to `limit` ready messages whose time-to-live has passed are
 * dead-lettered (`expired`), or dropped without a target. Returns what happened to each.
 */
export async function expireDue(ctx: EngineContext, queue: QueueRecord, limit: number): Promise<DeadLettered[]> {
  const target = await deadLetterTarget(ctx, queue, 'expired');
  const outcomes = await ctx.store.deadLetters.expire(queue.id, ctx.clock.now(), limit, target);
  ctx.deadLettered(queue, outcomes);
  return outcomes;
}

/**
 * reject-publish-dlx: publishes a full queue refused are dead-lettered (`maxlen`) through
 * its dead-letter exchange, if it has one, else dropped. They were never stored, so each
 * copy is a send to its queue, after the refusal.
 */
export async function deadLetterRefused(
  ctx: EngineContext,
  queue: QueueRecord,
  refused: StoredMessage[],
): Promise<void> {
  const settings = ctx.settingsOf(queue);
  if (settings.deadLetterExchange === undefined) return;
  const target = await exchangeTarget(ctx, queue, settings, 'maxlen');
  const now = ctx.clock.now();
  const byQueue = new Map<number, NewMessage[]>();
  const outcomes: DeadLettered[] = [];
  for (const m of refused) {
    const stored: StoredMessage = { ...m, queueId: queue.id, receiveCount: 0 };
    const a = target.arrival(stored);
    for (const c of a.copies)
      byQueue.set(c.queueId, [...(byQueue.get(c.queueId) ?? []), copiedMessage(stored, a, c, now)]);
    outcomes.push(...copyOutcomes(stored, a, 'maxlen'));
  }
  for (const [queueId, messages] of byQueue) await ctx.store.messages.send(queueId, messages);
  ctx.deadLettered(queue, outcomes);
}
