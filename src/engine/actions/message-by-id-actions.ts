import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { accessDenied } from '../queues/access-policy.js';
import { errors, sqsError } from '../kernel/errors.js';
import { queueExpiry } from '../messages/limits.js';
import { queueByArn } from './move-task-actions.js';
import { countRedrive, moveRules } from '../move-tasks/move-task-runner.js';
import { destinationsOf } from '../store/move-plan.js';
import { retentionMs } from '../queues/queue-attributes.js';
import type { MoveByIdResult } from '../store/store.js';
import type { QueueRecord, RequestContext, StoredMessage } from '../kernel/types.js';
import { checkBatchEntries, intParam, requireString } from '../queues/validation.js';
import { resolveQueue, urlOf } from '../queues/queue-lookup.js';

/** SQS's cap on a message's invisibility, counted from its receive. */
const TWELVE_HOURS_MS = 43_200_000;

/** MessageIds as SQS checks a batch: 1 to 10 distinct ids. */
function messageIds(input: { MessageIds: unknown }): string[] {
  const raw = input.MessageIds;
  return checkBatchEntries<{ Id: string }>(
    Array.isArray(raw) ? raw.map((Id: unknown) => ({ Id })) : raw,
    'MessageId',
    'MessageIds',
  ).map((e) => e.Id);
}

const notFound = (queue: QueueRecord, Id: string) => ({
  Id,
  Code: 'MessageNotFound',
  Message: `No message with id ${Id} is in ${queue.name}.`,
  SenderFault: true,
});

/**
 * DeleteMessagesById (a Redrive extension): deletes up to 10 messages of a queue by
 * message id, with no receipt handle, for an operator clearing poison messages out of a
 * dead-letter queue (the console's "Delete selected"). Permission as DeleteMessage.
 *
 * A message is deleted whatever its state: visible, delayed, or in flight. An operator
 * who chose a message to delete means that message, and a DLQ consumer holding it would
 * otherwise get it again; that consumer's later DeleteMessage or ChangeMessageVisibility
 * then behaves as after another consumer's delete. The list is checked as SQS checks a
 * batch (EmptyBatchRequest, TooManyEntriesInBatchRequest, BatchEntryIdsNotDistinct,
 * InvalidBatchEntryId); an id the queue does not hold fails alone, with MessageNotFound.
 */
export async function deleteMessagesById(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['DeleteMessagesById'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const ids = messageIds(input);
  const deleted = new Set(await engine.store.messages.deleteByIds(queue.id, ids, engine.clock.now()));
  if (deleted.size) engine.observer.deleted(queue, deleted.size);
  if (deleted.size)
    engine.log.info(
      { queue: queue.name, account: queue.accountId, by: ctx.accountId, messages: [...deleted] },
      'messages deleted by id',
    );
  return {
    Successful: ids.filter((id) => deleted.has(id)).map((Id) => ({ Id })),
    Failed: ids.filter((id) => !deleted.has(id)).map((Id) => notFound(queue, Id)),
  };
}

/**
 * ChangeMessageVisibilityById (a Redrive extension): an operator, who has no receipt
 * handle, changes the visibility of an in-flight message by its id; 0 makes it visible
 * now. Permission as ChangeMessageVisibility. The change is made as the holder's own
 * ChangeMessageVisibility would make it, counted from now and never past 12 hours from
 * the receive, so the holder's receipt is left as the message's visibility leaves it:
 * with a timeout it still holds the message; made visible, it is a lapsed receipt, as
 * when a visibility timeout ends (on a standard queue it still deletes until the message
 * is received again; on a FIFO queue it no longer does).
 */
export async function changeMessageVisibilityById(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ChangeMessageVisibilityById'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const id = requireString(input.MessageId, 'MessageId');
  if (input.VisibilityTimeout === undefined || input.VisibilityTimeout === null)
    throw errors.missingParameter('VisibilityTimeout');
  const timeout = intParam(input.VisibilityTimeout, 'VisibilityTimeout', 0, 43_200)!;
  const now = engine.clock.now();
  const notInflight = () => sqsError('MessageNotInflight', `Message ${id} is not in flight in ${queue.name}.`);
  const m = await engine.store.moveTasks.inflightById(queue.id, id, now);
  if (!m) throw notInflight();
  // The current receipt, required: a receive or a lapse in between means the message is no longer the one looked at.
  const [outcome] = await engine.store.messages.changeVisibility(
    queue.id,
    [
      {
        seq: m.seq,
        token: m.receiptToken!,
        visibilityTimeoutMs: timeout * 1000,
        maxSinceReceiveMs: TWELVE_HOURS_MS - 1,
        requireCurrent: true,
      },
    ],
    now,
  );
  if (outcome === 'tooLong')
    throw errors.invalidValue(
      'VisibilityTimeout',
      timeout,
      'Total VisibilityTimeout for the message is beyond the limit [43200 seconds]',
    );
  if (outcome !== 'ok') throw notInflight();
  engine.log.info(
    { queue: queue.name, account: queue.accountId, by: ctx.accountId, message: id, visibilityTimeout: timeout },
    'message visibility changed by id',
  );
  return {};
}

/**
 * MoveMessagesById (a Redrive extension): redrives up to 10 messages by id, each to the
 * queue it was dead-lettered from, or all to `DestinationArn` (a queue of the same type
 * in the caller's account and region). Each message moves as a move task moves it (move-task-runner.ts:
 * a new message id, sent now, its death history kept, counted as a redrive) and atomically:
 * it is in exactly one of the two queues at any time. Only a visible message moves (as a
 * task leaves in-flight and delayed ones); each failure is reported alone. The source is
 * the caller's own queue, as a move task's.
 */
export async function moveMessagesById(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['MoveMessagesById'],
) {
  const source = await resolveQueue(engine, ctx, input.QueueUrl);
  if (source.accountId !== ctx.accountId) throw accessDenied(urlOf(engine, ctx, source));
  const ids = messageIds(input);
  let destinationArn: string | undefined;
  if (input.DestinationArn !== undefined && input.DestinationArn !== null) {
    destinationArn = requireString(input.DestinationArn, 'DestinationArn');
    const destination = await queueByArn(engine, ctx, destinationArn);
    if (!destination)
      throw sqsError(
        'ResourceNotFoundException',
        "The resource that you specified for the DestinationArn parameter doesn't exist.",
      );
    if (destination.fifo !== source.fifo)
      throw errors.invalidParameterValue('The destination queue must be of the same type as the source queue.');
    if (destination.id === source.id)
      throw errors.invalidParameterValue('The destination queue must not be the source queue.');
  }
  const now = engine.clock.now();
  const rules = moveRules(source, { destinationArn }, (q, at) => queueExpiry(engine, q, at));
  const results = await engine.store.moveTasks.moveByIds(source.id, ids, {
    now,
    matches: (m) => rules.matches(m, now),
    // A dead-letter source in another account or region is not the caller's to send to.
    destination: (m) => {
      const a = rules.destination(m);
      return a && a.accountId === ctx.accountId && a.region === ctx.region ? a : undefined;
    },
    rewrite: (m, destination) => rules.rewrite(m, now, destination),
  });
  const moved = results.filter((r) => r.outcome === 'moved');
  // Counted as a move task's messages: a receive and a delete here, a send there (docs/monitoring.md).
  countRedrive(
    engine.observer,
    source,
    moved.length,
    destinationsOf(moved.map((r) => ({ message: r.message!, destination: r.destination! }))),
  );
  if (moved.length) {
    engine.log.info(
      {
        queue: source.name,
        account: source.accountId,
        by: ctx.accountId,
        messages: moved.map((r) => ({ id: r.id, to: r.destination!.name, newId: r.newMessageId })),
      },
      'messages moved by id',
    );
  }
  return {
    Successful: moved.map((r) => ({
      Id: r.id,
      MessageId: r.newMessageId,
      DestinationArn: engine.arnOf(r.destination!),
    })),
    Failed: results.filter((r) => r.outcome !== 'moved').map((r) => moveFailure(source, r, now, destinationArn)),
  };
}

function moveFailure(source: QueueRecord, r: MoveByIdResult, now: number, destinationArn: string | undefined) {
  const fail = (Code: string, Message: string) => ({ Id: r.id, Code, Message, SenderFault: true });
  const m = r.message as StoredMessage | undefined;
  if (!m || m.sentAt < now - retentionMs(source)) return notFound(source, r.id);
  if (r.outcome === 'noDestination') {
    return fail(
      'NonExistentQueue',
      `Message ${r.id} cannot move: ${destinationArn ?? m.deadLetterSourceArn} is not a queue of this account and region.`,
    );
  }
  if (m.visibleAt > now) {
    return m.receiveCount > 0
      ? fail('MessageInFlight', `Message ${r.id} is in flight; make it visible first.`)
      : fail('MessageDelayed', `Message ${r.id} is delayed until ${new Date(m.visibleAt).toISOString()}.`);
  }
  return fail(
    'NoDeadLetterSource',
    `Message ${r.id} was not dead-lettered, so it has no source queue; give a DestinationArn.`,
  );
}
