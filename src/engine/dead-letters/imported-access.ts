import { parseQueueArn } from '../queues/addressing.js';
import { errors } from '../errors.js';
import { RESTORE_ATTRIBUTES, SOURCE_ARN_ATTRIBUTE, type Restored } from './imported-deaths.js';
import type { MessageAttributes, QueueRecord, RequestContext } from '../types.js';

/**
 * Who may restore dead-letter metadata on a send, and what it may name
 * (docs/security.md). SQS itself accepts no system attribute on a send but
 * AWSTraceHeader, so these are Redrive's import extension and follow two rules:
 * - only the queue's owner may give them: to a sender from another account, granted
 *   SendMessage by the queue's Policy, they do not exist, and are refused as SQS refuses
 *   any unknown system attribute;
 * - a `DeadLetterQueueSourceArn` names a queue of the queue's own account and region,
 *   of its type, as a dead-letter queue and its sources always are in SQS.
 * Move tasks check every destination again when they run (move-plan.ts), so nothing
 * stored, however it got there, lets a task write outside its owner's account.
 */
export function checkRestoreCaller(ctx: RequestContext, queue: Pick<QueueRecord, 'accountId'>, sent: MessageAttributes | undefined): void {
  if (!sent || ctx.accountId === queue.accountId) return;
  const name = RESTORE_ATTRIBUTES.find((n) => n in sent);
  if (name !== undefined) throw errors.invalidParameterValue(`Message system attribute name '${name}' is invalid.`);
}

/** The restored source, checked against the queue it is sent to (after checkRestoreCaller). */
export function checkRestoredSource(queue: Pick<QueueRecord, 'accountId' | 'region' | 'fifo'>, restored: Restored): void {
  if (restored.deadLetterSourceArn === undefined) return;
  const a = parseQueueArn(restored.deadLetterSourceArn)!;
  if (a.accountId !== queue.accountId || a.region !== queue.region) {
    throw errors.invalidParameterValue(
      `Message system attribute ${SOURCE_ARN_ATTRIBUTE} is invalid. Reason: it must name a queue of this queue's account (${queue.accountId}) and region (${queue.region}).`,
    );
  }
  if (a.name.endsWith('.fifo') !== queue.fifo) {
    throw errors.invalidParameterValue(
      `Message system attribute ${SOURCE_ARN_ATTRIBUTE} is invalid. Reason: it must name a ${queue.fifo ? 'FIFO' : 'standard'} queue, as this queue is.`,
    );
  }
}
