import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { once } from 'node:events';
import { CliError } from './cli-error.js';
import type { Death, PeekedMessage } from '../wire/messages.js';
import { plural } from './dlq-format.js';
import type { SqsJsonClient } from './sqs-client.js';

/**
 * Export and import as JSON lines: one message a line, with what a replay needs (body,
 * attributes, FIFO group and deduplication ids, death history, an AMQP message's
 * exchange, routing keys and properties, and `BodyEncoding: "base64"` for a binary body)
 * and, for reading, where and when it was sent. Import sends the history with the
 * RedriveDeathHistory system attribute and the AMQP part with RedriveAmqp
 * (docs/extensions.md), so the replayed message still shows how it failed and AMQP
 * consumers get the same properties and body bytes.
 */
export interface ExportedMessage {
  MessageId: string;
  Body: string;
  MessageAttributes?: PeekedMessage['MessageAttributes'];
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  SentTimestamp?: number;
  DeadLetterQueueSourceArn?: string;
  DeathHistory?: Death[];
  /** 'base64': Body is a binary body, base64; import decodes it. */
  BodyEncoding?: string;
  /** An AMQP message's exchange, routing keys and properties (headers with their field types). */
  Amqp?: PeekedMessage['Amqp'];
}

function exported(m: PeekedMessage): ExportedMessage {
  const a = m.Attributes;
  const e: ExportedMessage = { MessageId: m.MessageId, Body: m.Body };
  if (m.MessageAttributes && Object.keys(m.MessageAttributes).length) e.MessageAttributes = m.MessageAttributes;
  if (a.MessageGroupId !== undefined) e.MessageGroupId = a.MessageGroupId;
  if (a.MessageDeduplicationId !== undefined) e.MessageDeduplicationId = a.MessageDeduplicationId;
  if (a.SentTimestamp !== undefined) e.SentTimestamp = Number(a.SentTimestamp);
  if (a.DeadLetterQueueSourceArn !== undefined) e.DeadLetterQueueSourceArn = a.DeadLetterQueueSourceArn;
  if (m.DeathHistory?.length) e.DeathHistory = m.DeathHistory;
  if (m.BodyEncoding) e.BodyEncoding = m.BodyEncoding;
  if (m.Amqp) e.Amqp = m.Amqp;
  return e;
}

/** Writes every message of the queue, oldest first, to `file` (stdout for `-`); returns the count. */
export async function exportQueue(sqs: SqsJsonClient, url: string, file: string): Promise<number> {
  const stream = file === '-' ? process.stdout : createWriteStream(file);
  let n = 0;
  let token: string | undefined;
  do {
    const page = await sqs.call<{ Messages: PeekedMessage[]; NextToken?: string }>('PeekMessages', {
      QueueUrl: url,
      MaxResults: 100,
      ...(token ? { NextToken: token } : {}),
    });
    const text = page.Messages.map((m) => `${JSON.stringify(exported(m))}\n`).join('');
    if (text && !stream.write(text)) await once(stream, 'drain');
    n += page.Messages.length;
    token = page.NextToken;
  } while (token);
  if (stream !== process.stdout)
    await new Promise<void>((resolve, reject) => stream.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return n;
}

/** The SendMessageBatch entry of an exported line; `line` names it in errors. */
function entry(m: ExportedMessage, id: number, fifo: boolean, where: string): Record<string, unknown> {
  if (!m || typeof m.Body !== 'string')
    throw new CliError(`${where}: not an exported message (it needs a "Body" string)`, { code: 'InvalidImport' });
  if (fifo && !m.MessageGroupId)
    throw new CliError(`${where}: a FIFO queue needs a MessageGroupId, and this message has none`, {
      code: 'InvalidImport',
    });
  const e: Record<string, unknown> = { Id: String(id), MessageBody: m.Body };
  if (m.MessageAttributes && Object.keys(m.MessageAttributes).length) e.MessageAttributes = m.MessageAttributes;
  if (fifo) {
    e.MessageGroupId = m.MessageGroupId;
    if (m.MessageDeduplicationId) e.MessageDeduplicationId = m.MessageDeduplicationId;
  }
  const restore: Record<string, { DataType: string; StringValue: string }> = {};
  if (m.DeathHistory?.length)
    restore.RedriveDeathHistory = { DataType: 'String', StringValue: JSON.stringify(m.DeathHistory) };
  if (m.DeadLetterQueueSourceArn)
    restore.DeadLetterQueueSourceArn = { DataType: 'String', StringValue: m.DeadLetterQueueSourceArn };
  // The server checks and stores it as the message's AMQP envelope (docs/extensions.md).
  if (m.Amqp || m.BodyEncoding)
    restore.RedriveAmqp = {
      DataType: 'String',
      StringValue: JSON.stringify({ ...m.Amqp, ...(m.BodyEncoding ? { BodyEncoding: m.BodyEncoding } : {}) }),
    };
  if (Object.keys(restore).length) e.MessageSystemAttributes = restore;
  return e;
}

function parseLine(text: string, where: string): ExportedMessage {
  try {
    return JSON.parse(text) as ExportedMessage;
  } catch (e) {
    throw new CliError(`${where}: not JSON (${(e as Error).message})`, { code: 'InvalidImport' });
  }
}

const BATCH_BYTES = 900_000;

export interface ImportResult {
  sent: number;
  failed: { line: number; code: string; message: string }[];
}

/** Sends each line of `file` (stdin for `-`) to the queue, ten at a time. */
export async function importQueue(
  sqs: SqsJsonClient,
  url: string,
  fifo: boolean,
  file: string,
  name: string,
): Promise<ImportResult> {
  const lines = createInterface({
    input: strictUtf8(file === '-' ? process.stdin : createReadStream(file)),
    crlfDelay: Infinity,
  });
  const result: ImportResult = { sent: 0, failed: [] };
  let batch: { line: number; entry: Record<string, unknown> }[] = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const r = await sqs.call<{ Successful?: unknown[]; Failed?: { Id: string; Code: string; Message: string }[] }>(
      'SendMessageBatch',
      {
        QueueUrl: url,
        Entries: batch.map((b) => b.entry),
      },
    );
    result.sent += r.Successful?.length ?? 0;
    for (const f of r.Failed ?? [])
      result.failed.push({ line: batch.find((b) => b.entry.Id === f.Id)!.line, code: f.Code, message: f.Message });
    batch = [];
    bytes = 0;
  };
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (!text.trim()) continue;
      const where = `${file === '-' ? 'stdin' : file} line ${n}`;
      let e: Record<string, unknown>;
      try {
        e = entry(parseLine(text, where), n, fifo, where);
      } catch (err) {
        // What came before the bad line is sent, so the report says exactly what is in the queue.
        await flush();
        throw new CliError(
          `${(err as Error).message}; ${plural(result.sent, 'message')} before it ${result.sent === 1 ? 'was' : 'were'} imported into ${name}, none after it`,
          { code: 'InvalidImport' },
        );
      }
      const size = Buffer.byteLength(text);
      if (batch.length === 10 || bytes + size > BATCH_BYTES) await flush();
      batch.push({ line: n, entry: e });
      bytes += size;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new CliError(`--in ${file}: no such file`, { code: 'InvalidFlag' });
    if (e instanceof NotUtf8) {
      await flush();
      throw new CliError(
        `${file === '-' ? 'stdin' : file} after line ${n}: not UTF-8 text; ${plural(result.sent, 'message')} before it ${result.sent === 1 ? 'was' : 'were'} imported into ${name}, none after it`,
        { code: 'InvalidImport' },
      );
    }
    throw e;
  }
  await flush();
  return result;
}

class NotUtf8 extends Error {
  override readonly name = 'NotUtf8';
}

/** The input as text, or an error at the first byte that is not UTF-8 (never U+FFFD in its place). */
function strictUtf8(input: Readable): Readable {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = (chunk?: Buffer) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw new NotUtf8('not UTF-8');
    }
  };
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        done(null, decode(chunk));
      } catch (e) {
        done(e as Error);
      }
    },
    flush(done) {
      try {
        done(null, decode());
      } catch (e) {
        done(e as Error);
      }
    },
  });
  input.on('error', (e) => out.destroy(e));
  return input.pipe(out);
}
