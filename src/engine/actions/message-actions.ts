import type { ReceiptOutcome } from '../store/store.js';
import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import type { ReceiptCodec } from '../messages/receipt.js';
import { errors, SqsError, sqsError } from '../kernel/errors.js';
import { selectMessageAttributes, systemAttributes } from '../messages/message-attributes.js';
import { queueNumber, retentionMs } from '../queues/queue-attributes.js';
import type { Attempt, Cancellation } from '../messages/long-poll.js';
import { newReceiptToken } from '../messages/receipt.js';
import { DEDUP_INTERVAL_MS, FIFO_INFLIGHT_LIMIT, receiveAttemptId } from '../messages/fifo.js';
import { receiveRule } from '../dead-letters/road.js';
import { deathAttributes } from '../dead-letters/deaths.js';
import type { QueueRecord, RequestContext, StoredMessage } from '../kernel/types.js';
import { checkBatchEntries, intParam } from '../queues/validation.js';
import { knownQueue, resolveQueue } from '../queues/queue-lookup.js';

/** A batch entry's members, as the client sent them, before they are checked. */
type Entry = Record<string, unknown>;
const TWELVE_HOURS_MS = 43_200_000;

/** A failed batch entry, as SendMessageBatch and the receipt batches report it. */
export function failure(id: string, e: unknown) {
  const err = e instanceof SqsError ? e : errors.internal();
  return { Id: id, SenderFault: err.senderFault, Code: err.code, Message: err.message };
}

const nameList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

export async function receiveMessage(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ReceiveMessage'],
  signal?: Cancellation,
) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const max = intParam(input.MaxNumberOfMessages, 'MaxNumberOfMessages', 1, 10) ?? 1;
  const visibility =
    intParam(input.VisibilityTimeout, 'VisibilityTimeout', 0, 43_200) ?? queueNumber(queue, 'VisibilityTimeout');
  const wait =
    intParam(input.WaitTimeSeconds, 'WaitTimeSeconds', 0, 20, 'Must be >= 0 and <= 20, if provided.') ??
    queueNumber(queue, 'ReceiveMessageWaitTimeSeconds');
  const systemNames = new Set([...nameList(input.AttributeNames), ...nameList(input.MessageSystemAttributeNames)]);
  const userNames = nameList(input.MessageAttributeNames);
  const attemptId = queue.fifo ? receiveAttemptId(input.ReceiveRequestAttemptId) : undefined;
  const deadLetter = await receiveRule(engine, queue);

  const attempt = async (): Promise<Attempt<StoredMessage>> => {
    const now = engine.clock.now();
    if (await overInflightLimit(engine, queue, now)) {
      // Short polls of a standard queue are told; long polls and FIFO queues get nothing.
      if (wait > 0 || queue.fifo) return { messages: [] };
      throw sqsError('OverLimit', `Too many messages in flight for queue ${queue.name}.`);
    }
    const noisy = await engine.fair.noisy(queue, now);
    const r = await engine.store.messages.receive(queue.id, {
      now,
      max,
      visibilityTimeoutMs: visibility * 1000,
      retentionCutoff: now - retentionMs(queue),
      newToken: newReceiptToken,
      deadLetter,
      fifo: queue.fifo,
      attemptId,
      attemptUntil: now + DEDUP_INTERVAL_MS,
      ...(noisy && { noisy }),
    });
    engine.fair.noteReceived(queue, r.messages);
    engine.deadLettered(queue, r.deadLettered);
    noteReceived(engine, queue, r.messages.length);
    return r;
  };
  // Each waiting long poll holds a connection and its memory for up to 20 s. Past the cap a
  // receive still gets what is there, but does not wait: an empty answer would make the
  // client poll again at once, so it gets a 503, which SDKs retry with back-off.
  // One account's long polls are counted too (its quota, half the pool by default), so that
  // its callers alone cannot take every place.
  const mine = wait > 0 ? (engine.longPollsByAccount.get(ctx.accountId) ?? 0) : 0;
  const capped = wait > 0 && (engine.longPolls.size >= engine.maxLongPolls || mine >= engine.quotas.longPolls);
  const counted = wait > 0 && !capped;
  if (counted) engine.longPollsByAccount.set(ctx.accountId, mine + 1);
  let messages: StoredMessage[];
  try {
    messages = await engine.longPolls.wait(queue.id, capped ? 0 : wait * 1000, attempt, signal, max);
  } finally {
    if (counted) {
      const n = engine.longPollsByAccount.get(ctx.accountId)! - 1;
      if (n === 0) engine.longPollsByAccount.delete(ctx.accountId);
      else engine.longPollsByAccount.set(ctx.accountId, n);
    }
  }
  if (capped && messages.length === 0) {
    throw sqsError(
      'ServiceUnavailable',
      engine.longPolls.size >= engine.maxLongPolls
        ? 'Too many long polls are waiting; the server is shedding load. Retry with back-off.'
        : "Too many of this account's long polls are waiting; the server is shedding load. Retry with back-off.",
    );
  }
  // Counted per call, as CloudWatch counts NumberOfEmptyReceives: a long poll's attempts are one receive.
  engine.observer.received(queue, messages.length);
  if (messages.length === 0) return {};
  const receipts = await engine.receipts();
  return {
    Messages: messages.map((m) => {
      const out: Record<string, unknown> = {
        MessageId: m.messageId,
        ReceiptHandle: receipts.seal({ queueId: queue.id, seq: m.seq, token: m.receiptToken! }),
        MD5OfBody: m.md5OfBody,
        Body: m.body,
      };
      const attrs = { ...systemAttributes(m, systemNames), ...deathAttributes(m, (n) => systemNames.has(n)) };
      if (Object.keys(attrs).length) out.Attributes = attrs;
      const user = selectMessageAttributes(m.attributes, userNames);
      if (user.attributes) {
        out.MD5OfMessageAttributes = user.md5;
        out.MessageAttributes = user.attributes;
      }
      return out;
    }),
  };
}

/**
 * The in-flight limit without counting on every receive: an upper bound grows with
 * each receive and is replaced by an exact count only when it nears the limit.
 */
function noteReceived(engine: ActionEngine, queue: QueueRecord, n: number): void {
  if (n) engine.inflightEstimates.set(queue.id, (engine.inflightEstimates.get(queue.id) ?? 0) + n);
}

async function overInflightLimit(engine: ActionEngine, queue: QueueRecord, now: number): Promise<boolean> {
  const limit = queue.fifo ? Math.min(FIFO_INFLIGHT_LIMIT, engine.inflightLimit) : engine.inflightLimit;
  const estimate = engine.inflightEstimates.get(queue.id) ?? Infinity;
  if (estimate < limit) return false;
  const exact = (await engine.store.messages.inflightByGroup(queue.id, now)).total;
  engine.inflightEstimates.set(queue.id, exact);
  return exact >= limit;
}

function deleteError(outcome: ReceiptOutcome, handle: string): SqsError | undefined {
  if (outcome === 'lapsed') return errors.invalidValue('ReceiptHandle', handle, 'The receipt handle has expired.');
  return undefined;
}

export async function deleteMessage(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['DeleteMessage']) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const receipt = (await engine.receipts()).open(queue, input.ReceiptHandle);
  const [outcome] = await engine.store.messages.delete(queue.id, [receipt], {
    now: engine.clock.now(),
    requireCurrent: queue.fifo,
  });
  if (outcome === 'ok') engine.observer.deleted(queue, 1);
  const err = deleteError(outcome!, String(input.ReceiptHandle));
  if (err) throw err;
  return {};
}

/** Runs a batch of receipt operations: per-entry validation, one store call, per-entry results. */
async function receiptBatch<T>(
  input: { Entries: unknown },
  entryShape: string,
  prepare: (e: Entry) => T,
  apply: (items: T[]) => Promise<ReceiptOutcome[]>,
  toError: (o: ReceiptOutcome, e: Entry) => SqsError | undefined,
) {
  const entries = checkBatchEntries<Entry & { Id: string }>(input.Entries, entryShape);
  const prepared: { e: Entry & { Id: string }; item?: T; error?: unknown }[] = entries.map((e) => {
    try {
      return { e, item: prepare(e) };
    } catch (error) {
      return { e, error };
    }
  });
  const ok = prepared.filter((p) => p.item !== undefined);
  const outcomes = ok.length ? await apply(ok.map((p) => p.item!)) : [];
  ok.forEach((p, i) => {
    const err = toError(outcomes[i]!, p.e);
    if (err) p.error = err;
  });
  const out: Record<string, unknown> = {};
  const successful = prepared.filter((p) => !p.error).map((p) => ({ Id: p.e.Id }));
  const failed = prepared.filter((p) => p.error).map((p) => failure(p.e.Id, p.error));
  if (successful.length) out.Successful = successful;
  if (failed.length) out.Failed = failed;
  return out;
}

export async function deleteMessageBatch(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['DeleteMessageBatch'],
) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const receipts = await engine.receipts();
  return receiptBatch(
    input,
    'DeleteMessageBatchRequestEntry',
    (e) => receipts.open(queue, e.ReceiptHandle),
    async (items) => {
      const outcomes = await engine.store.messages.delete(queue.id, items, {
        now: engine.clock.now(),
        requireCurrent: queue.fifo,
      });
      const ok = outcomes.filter((o) => o === 'ok').length;
      if (ok) engine.observer.deleted(queue, ok);
      return outcomes;
    },
    (o, e) => deleteError(o, String(e.ReceiptHandle)),
  );
}

function visibilityError(outcome: ReceiptOutcome, handle: string, timeout: number): SqsError | undefined {
  switch (outcome) {
    case 'ok':
      return undefined;
    case 'tooLong':
      return errors.invalidValue(
        'VisibilityTimeout',
        timeout,
        'Total VisibilityTimeout for the message is beyond the limit [43200 seconds]',
      );
    case 'lapsed':
      return errors.invalidValue('ReceiptHandle', handle, 'The receipt handle has expired.');
    case 'notInflight':
      return sqsError('MessageNotInflight', 'The message referred to is not in flight.');
    default:
      return errors.invalidValue(
        'ReceiptHandle',
        handle,
        'Message does not exist or is not available for visibility timeout change.',
      );
  }
}

function visibilityChange(receipts: ReceiptCodec, queue: QueueRecord, e: Entry) {
  const receipt = receipts.open(queue, e.ReceiptHandle);
  if (e.VisibilityTimeout === undefined || e.VisibilityTimeout === null)
    throw errors.missingParameter('VisibilityTimeout');
  const timeout = intParam(e.VisibilityTimeout, 'VisibilityTimeout', 0, 43_200)!;
  // SQS counts any time since the receive, so even a change made at once may not reach
  // the full 12 hours: 43200 right after a receive is already beyond the limit.
  return {
    ...receipt,
    visibilityTimeoutMs: timeout * 1000,
    maxSinceReceiveMs: TWELVE_HOURS_MS - 1,
    requireCurrent: queue.fifo,
  };
}

export async function changeMessageVisibility(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ChangeMessageVisibility'],
) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const change = visibilityChange(await engine.receipts(), queue, input);
  const [outcome] = await engine.store.messages.changeVisibility(queue.id, [change], engine.clock.now());
  const err = visibilityError(outcome!, String(input.ReceiptHandle), change.visibilityTimeoutMs / 1000);
  if (err) throw err;
  return {};
}

export async function changeMessageVisibilityBatch(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ChangeMessageVisibilityBatch'],
) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const receipts = await engine.receipts();
  return receiptBatch(
    input,
    'ChangeMessageVisibilityBatchRequestEntry',
    (e) => visibilityChange(receipts, queue, e),
    (items) => engine.store.messages.changeVisibility(queue.id, items, engine.clock.now()),
    (o, e) => visibilityError(o, String(e.ReceiptHandle), Number(e.VisibilityTimeout)),
  );
}
