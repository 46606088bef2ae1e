import { randomUUID } from 'node:crypto';
import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors, sqsError } from '../kernel/errors.js';
import { md5Hex, md5OfAttributes } from '../messages/md5.js';
import { sequenceNumber } from '../messages/message-attributes.js';
import { queueNumber } from '../queues/queue-attributes.js';
import { checkFifoParameters, fifoFields } from '../messages/fifo.js';
import { lengthLimit } from '../dead-letters/road.js';
import { queueFull, sendExpiry } from '../messages/limits.js';
import { checkRestoreCaller, checkRestoredSource, restoredDeaths } from '../dead-letters/restored-deaths.js';
import { restoredEnvelope } from '../amqp/message-view.js';
import type { MessageAttributes, NewMessage, QueueRecord, RequestContext, StoredMessage } from '../kernel/types.js';
import {
  checkBatchEntries,
  checkBody,
  checkMessageAttributes,
  hasForbiddenCharacters,
  intParam,
} from '../queues/validation.js';
import { failure } from './message-actions.js';
import { knownQueue, resolveQueue } from '../queues/queue-lookup.js';

/**
 * SendMessage and SendMessageBatch: each message validated and built here, then stored in
 * one call. Receiving, deleting and changing visibility are in message-actions.ts.
 */

/** What SendMessage and each entry of SendMessageBatch say about one message. */
type MessageFields = Omit<ActionInputs['SendMessage'], 'QueueUrl'>;

/** Validates one message to send and builds it; `batch` changes SQS's wording of size errors. */
function buildMessage(
  engine: ActionEngine,
  ctx: RequestContext,
  queue: QueueRecord,
  e: MessageFields,
  batch: boolean,
): { message: NewMessage; size: number } {
  const body = checkBody(e.MessageBody);
  const user = checkMessageAttributes(e.MessageAttributes);
  const system = checkMessageAttributes(e.MessageSystemAttributes, 'system');
  const size = Buffer.byteLength(body, 'utf8') + user.size;
  const max = queueNumber(queue, 'MaximumMessageSize');
  if (size > max) {
    throw errors.invalidParameterValue(
      `One or more parameters ${batch ? 'cannot be validated' : 'are invalid'}. Reason: Message must be shorter than ${max} bytes.`,
    );
  }
  let delay = queueNumber(queue, 'DelaySeconds');
  // A FIFO queue has only its queue-level delay (a per-message one was rejected earlier).
  if (!queue.fifo && e.DelaySeconds !== undefined && e.DelaySeconds !== null) {
    delay = intParam(e.DelaySeconds, 'DelaySeconds', 0, 900)!;
  }
  const now = engine.clock.now();
  // An import restores the death history (extension); those attributes are not stored as such.
  checkRestoreCaller(ctx, queue, system.attributes);
  const restored = restoredDeaths(system.attributes);
  checkRestoredSource(queue, restored);
  const { systemAttributes, deaths, deadLetterSourceArn } = restored;
  const message: NewMessage = {
    messageId: randomUUID(),
    body,
    attributes: user.attributes,
    systemAttributes: withTraceHeader(ctx, restoredEnvelope(systemAttributes, body, queue.name, engine.amqpCodec)),
    md5OfBody: md5Hex(body),
    md5OfAttributes: md5OfAttributes(user.attributes),
    md5OfSystemAttributes: md5OfAttributes(system.attributes),
    senderId: ctx.accountId,
    sentAt: now,
    visibleAt: now + delay * 1000,
    expiresAt: sendExpiry(engine, queue, system.attributes, now),
    ...fifoFields(queue, e, body, now),
    ...(deaths ? { deaths } : {}),
    ...(deadLetterSourceArn ? { deadLetterSourceArn } : {}),
  };
  return { message, size };
}

/**
 * The X-Amzn-Trace-Id header becomes the AWSTraceHeader system attribute unless the send
 * gives one itself. The response's MD5 covers only the attributes the client sent.
 */
function withTraceHeader(ctx: RequestContext, system: MessageAttributes | undefined): MessageAttributes | undefined {
  if (ctx.traceHeader === undefined || system?.AWSTraceHeader) return system;
  // A header that is not text SQS could store is left out, never stored altered.
  if (hasForbiddenCharacters(ctx.traceHeader)) return system;
  return { ...system, AWSTraceHeader: { DataType: 'String', StringValue: ctx.traceHeader } };
}

function sendResult(queue: QueueRecord, m: StoredMessage) {
  const out: Record<string, unknown> = { MessageId: m.messageId, MD5OfMessageBody: m.md5OfBody };
  if (m.md5OfAttributes) out.MD5OfMessageAttributes = m.md5OfAttributes;
  if (m.md5OfSystemAttributes) out.MD5OfMessageSystemAttributes = m.md5OfSystemAttributes;
  if (queue.fifo) out.SequenceNumber = sequenceNumber(m.seq);
  return out;
}

export async function sendMessage(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['SendMessage']) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  checkFifoParameters(queue, input, false);
  const { message, size } = buildMessage(engine, ctx, queue, input, false);
  const limit = lengthLimit(engine, queue);
  const {
    messages: [stored],
    deadLettered,
  } = await engine.store.messages.send(queue.id, [message], limit && (await limit));
  engine.deadLettered(queue, deadLettered);
  if (stored!.rejected) throw queueFull(queue);
  if (stored!.duplicate) engine.observer.deduplicated(queue, 1);
  else engine.observer.sent(queue, 1, [size]);
  return sendResult(queue, stored!);
}

/** Tells the observer what a batch stored: sizes of the messages sent, and the duplicates. */
function observeBatch(engine: ActionEngine, queue: QueueRecord, stored: StoredMessage[], sizes: number[]): void {
  const sent: number[] = [];
  let duplicates = 0;
  stored.forEach((m, i) => {
    if (m.duplicate) duplicates++;
    else if (!m.rejected) sent.push(sizes[i]!);
  });
  if (sent.length) engine.observer.sent(queue, sent.length, sent);
  if (duplicates) engine.observer.deduplicated(queue, duplicates);
}

const BATCH_LIMIT = 1_048_576;

export async function sendMessageBatch(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['SendMessageBatch'],
) {
  const queue = knownQueue(engine, ctx, input.QueueUrl) ?? (await resolveQueue(engine, ctx, input.QueueUrl));
  const entries = checkBatchEntries<MessageFields & { Id: string }>(input.Entries, 'SendMessageBatchRequestEntry');
  for (const e of entries) checkFifoParameters(queue, e, true);
  let total = 0;
  const built: { id: string; message?: NewMessage; size?: number; error?: unknown }[] = entries.map((e) => {
    try {
      const { message, size } = buildMessage(engine, ctx, queue, e, true);
      total += size;
      return { id: e.Id, message, size };
    } catch (error) {
      total += typeof e.MessageBody === 'string' ? Buffer.byteLength(e.MessageBody) : 0;
      return { id: e.Id, error };
    }
  });
  if (total > BATCH_LIMIT) {
    throw sqsError(
      'BatchRequestTooLong',
      `Batch requests cannot be longer than ${BATCH_LIMIT} bytes. You have sent ${total} bytes.`,
    );
  }
  const good = built.filter((b) => b.message);
  const { messages: stored, deadLettered } = good.length
    ? await engine.store.messages.send(
        queue.id,
        good.map((b) => b.message!),
        await lengthLimit(engine, queue),
      )
    : { messages: [], deadLettered: [] };
  engine.deadLettered(queue, deadLettered);
  observeBatch(
    engine,
    queue,
    stored,
    good.map((b) => b.size!),
  );
  stored.forEach((m, i) => {
    if (m.rejected) good[i]!.error = queueFull(queue);
  });
  const out: Record<string, unknown> = {};
  const successful = stored.flatMap((m, i) => (m.rejected ? [] : [{ Id: good[i]!.id, ...sendResult(queue, m) }]));
  if (successful.length) out.Successful = successful;
  const failed = built.filter((b) => b.error).map((b) => failure(b.id, b.error));
  if (failed.length) out.Failed = failed;
  return out;
}
