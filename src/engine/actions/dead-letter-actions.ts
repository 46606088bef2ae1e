import { deadLetterHeld } from '../dead-letters/road.js';
import { deathAttributes, firstDeath, lastDeath } from '../dead-letters/deaths.js';
import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors } from '../kernel/errors.js';
import { systemAttributes } from '../messages/message-attributes.js';
import { retentionMs } from '../queues/queue-attributes.js';
import { decodeToken, encodeToken } from './queue-actions.js';
import { deadLetterSources } from '../dead-letters/redrive-policy.js';
import type { RequestContext, StoredMessage } from '../kernel/types.js';
import { intParam } from '../queues/validation.js';
import { filterPredicate, parseMoveFilter } from '../move-tasks/move-filter.js';
import { PEEK_SCAN, scanQueue } from '../messages/bounded-scan.js';
import { amqpView, bodyEncoding, type AmqpPropertyCodec } from '../amqp/message-view.js';
import { countMatches } from './triage.js';
import { resolveQueue, urlOf } from '../queues/queue-lookup.js';

export async function listDeadLetterSourceQueues(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ListDeadLetterSourceQueues'],
) {
  const dlq = await resolveQueue(engine, ctx, input.QueueUrl);
  const max = intParam(input.MaxResults, 'MaxResults', 1, 1000);
  const after = decodeToken(input.NextToken);
  const sources = (await deadLetterSources(engine, dlq)).filter((q) => after === undefined || q.name > after);
  const limit = max ?? 1000;
  const page = sources.slice(0, limit);
  // The key is lowercase `queueUrls` in SQS's model and responses.
  const out: Record<string, unknown> = { queueUrls: page.map((q) => urlOf(engine, ctx, q)) };
  // As in ListQueues, SQS pages only when MaxResults is given.
  if (max !== undefined && sources.length > limit) out.NextToken = encodeToken(page[page.length - 1]!.name);
  return out;
}

const ALL = new Set(['All']);

/**
 * PeekMessages (a Redrive extension, `X-Amz-Target: AmazonSQS.PeekMessages`): browses a
 * queue's messages by position without receiving them. Unlike viewing messages in the
 * SQS console, it changes no receive count and no visibility, so it can never push a
 * message into a dead-letter queue. Input: QueueUrl, MaxResults (1-100, default 10),
 * NextToken, Filter (selective redrive's, move-filter.ts), CountOnly (triage.ts: a count
 * of the matches instead of the messages). Expired messages, which no receive would
 * return, are left out.
 *
 * A filter is applied here, to at most PEEK_SCAN a request, so a search of a large queue
 * costs the same per page whatever it finds: a page can come back with fewer matches
 * than MaxResults (even none) and a NextToken that resumes after the last message
 * examined, as a move task resumes after its scanLimit.
 */
export async function peekMessages(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['PeekMessages']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const max = intParam(input.MaxResults, 'MaxResults', 1, 100) ?? 10;
  const filter = parseMoveFilter(input.Filter);
  const token = decodeToken(input.NextToken);
  const start = token === undefined ? 0 : Number(token);
  if (!Number.isSafeInteger(start) || start < 0) throw errors.invalidParameterValue('Invalid NextToken value.');
  const now = engine.clock.now();
  const cutoff = now - retentionMs(queue);
  const wanted = filterPredicate(filter);
  if (input.CountOnly === true) return countMatches(engine, queue, start, wanted, cutoff);
  const page: StoredMessage[] = [];
  // Unfiltered, `max + 1` messages fill the page and tell whether more follow.
  const budget = filter ? PEEK_SCAN : { messages: max + 1, bytes: Infinity, page: max + 1 };
  const { cursor, stoppedBy } = await scanQueue(engine.store, queue.id, start, budget, (m) => {
    if (page.length === max) return false;
    if (m.sentAt >= cutoff && wanted(m)) page.push(m);
    return true;
  });
  const out: Record<string, unknown> = { Messages: page.map((m) => peeked(m, now, engine.amqpCodec)) };
  if (stoppedBy !== 'end') out.NextToken = encodeToken(String(cursor));
  return out;
}

function peeked(m: StoredMessage, now: number, codec: AmqpPropertyCodec | undefined) {
  const out: Record<string, unknown> = {
    MessageId: m.messageId,
    Body: m.body,
    MD5OfBody: m.md5OfBody,
    Attributes: { ...systemAttributes(m, ALL), ...deathAttributes(m, () => true) },
    Position: m.seq,
    State: m.visibleAt <= now ? 'VISIBLE' : m.receiveCount > 0 ? 'IN_FLIGHT' : 'DELAYED',
    VisibleTimestamp: m.visibleAt,
  };
  if (m.attributes) out.MessageAttributes = m.attributes;
  const amqp = amqpView(m, codec);
  if (amqp) out.Amqp = amqp;
  const encoding = bodyEncoding(m);
  if (encoding) out.BodyEncoding = encoding;
  if (m.deadLetteredAt !== undefined) out.DeadLetteredTimestamp = m.deadLetteredAt;
  if (m.expiresAt !== undefined) out.ExpiresTimestamp = m.expiresAt;
  if (m.deaths?.length) {
    out.DeathHistory = m.deaths;
    out.FirstDeath = firstDeath(m.deaths);
    out.LastDeath = lastDeath(m.deaths);
  }
  return out;
}

const MAX_REASON = 1024;

/**
 * RejectMessage (a Redrive extension): the consumer gives up on a message it holds, and
 * it is dead-lettered at once with reason `rejected` and the consumer's reason text, as
 * an AMQP basic.reject without requeue. Letting the visibility timeout lapse is not a
 * rejection. Input: QueueUrl, ReceiptHandle (the latest receipt, still in flight),
 * Reason (optional, up to 1024 characters).
 *
 * Without a dead-letter queue RabbitMQ would drop the message; Redrive refuses instead,
 * and the message stays in flight until its visibility timeout ends, so a reject can
 * never lose a message.
 */
export async function rejectMessage(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['RejectMessage']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const handle = input.ReceiptHandle;
  if (handle === undefined || handle === null || handle === '') throw errors.missingParameter('ReceiptHandle');
  const receipt = (await engine.receipts()).open(queue, handle);
  const reason = input.Reason;
  if (reason !== undefined && reason !== null && (typeof reason !== 'string' || reason.length > MAX_REASON)) {
    throw errors.invalidValue('Reason', '(reason)', `Reason must be a string of at most ${MAX_REASON} characters.`);
  }
  const result = await deadLetterHeld(engine, queue, receipt, 'rejected', {
    withoutTarget: 'refuse',
    rejectReason: typeof reason === 'string' && reason !== '' ? reason : undefined,
  });
  if (!result) {
    throw errors.invalidParameterValue(
      `Queue ${queue.name} has no dead-letter queue, so the message cannot be rejected; it stays in flight until its visibility timeout ends.`,
    );
  }
  const { outcome } = result;
  if (outcome === 'ok') return {};
  if (outcome === 'gone') {
    throw errors.invalidValue('ReceiptHandle', handle, 'Message does not exist or is not available for rejection.');
  }
  throw errors.invalidValue('ReceiptHandle', handle, 'The receipt handle has expired.');
}
