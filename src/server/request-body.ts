import type { IncomingMessage } from 'node:http';
import { sqsError, type SqsError } from '../engine/kernel/errors.js';
import { bodyBudgetError, type Admission, type Ticket } from './admission.js';

/** Largest request body accepted: SQS's 1 MiB payloads with room for Query and JSON encoding. */
export const MAX_REQUEST_BODY = 6 * 1024 * 1024;

/**
 * A refused body's remaining bytes are read and dropped, up to this many, so that the client
 * reads the refusal: closing a socket with unread bytes resets it, and the client's stack
 * then drops the answer it had not yet read. A client that sends more than this after its
 * refusal is cut off.
 */
const DISCARD_LIMIT = 8 * 1024 * 1024;

/**
 * What a piece of a body costs at least, counted against the request's limit, the budgets
 * and the bytes dropped after a refusal. The parser hands a body over in pieces, an event
 * each, whose cost (microseconds) does not depend on their size: a body sent as one-byte
 * chunks makes one per byte. Counted at 1 KiB each, such a body is refused after 6,144
 * pieces (413), and its connection cut 8,192 pieces later, so each costs the server what
 * a body read in large pieces would. Real clients' pieces are socket reads or chunks of
 * kilobytes, which this never changes the count of by more than a few percent.
 */
const PIECE_COST = 1024;

/** A chunk's framing (`1\r\n` before it, `\r\n` after), counted with each piece of a chunked body. */
const CHUNK_FRAMING = 5;

const pieceCost = (piece: Buffer, framing: number) => Math.max(piece.length + framing, PIECE_COST);

/** A body of unknown length starts in this much room, doubled as it fills. */
const FIRST_ROOM = 16 * 1024;

/**
 * Reads a request's body whole, counting its bytes in the admission budget as they arrive,
 * whether the body is framed by Content-Length or chunked (then with each chunk's framing),
 * each piece at least PIECE_COST:
 * a body that grows past `limit` (413) or past the budget (503) is refused as soon as it
 * does. The bytes are copied as they arrive into one buffer, doubled as the body grows,
 * never kept as the parser's pieces: each of those may
 * hold a whole socket read in memory, so a body of one-byte chunks would hold thousands of
 * times its size. Once refused nothing more of it is kept; the rest is dropped as it
 * arrives (up to DISCARD_LIMIT), and the connection may serve the next request once the
 * body ends; a body made mostly of pieces' overhead is not read further, and its
 * connection is closed with the answer. (A declared length that cannot fit is refused at the door, admission.ts.) A
 * client that goes away mid-body rejects the promise too, so its bytes are given back.
 */
export function readBody(req: IncomingMessage, limit: number, admission: Admission, ticket: Ticket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const framing = req.headers['transfer-encoding'] === undefined ? 0 : CHUNK_FRAMING;
    let body: Buffer | undefined;
    /** The first piece, kept as it came while it is the only one (nearly every request). */
    let only: Buffer | undefined;
    let length = 0;
    /** Bytes received, and what they count for (each piece at least PIECE_COST). */
    let received = 0;
    let counted = 0;
    const refuse = (e: SqsError) => {
      body = only = undefined;
      req.removeAllListeners('data');
      if (counted > 2 * received) {
        // Mostly pieces' overhead: reading on would cost what reading this far did. The
        // socket stops being read at once; the answer closes the connection.
        req.socket.pause();
        reject(new BodyRefused(e, true));
        return;
      }
      let dropped = 0;
      req.on('data', (chunk: Buffer) => {
        dropped += pieceCost(chunk, framing);
        if (dropped > DISCARD_LIMIT) req.socket.destroy();
      });
      reject(new BodyRefused(e));
    };
    const append = (chunk: Buffer) => {
      const needed = length + chunk.length;
      if (!body || body.length < needed) {
        // Doubling: the copies cost O(bytes), and the room never exceeds twice what arrived
        // (nor the declared length): a declared length is a promise, not bytes to reserve.
        let room = Math.min(limit, Math.max(needed, body ? body.length * 2 : FIRST_ROOM));
        const declared = Number(req.headers['content-length']);
        if (declared >= needed) room = Math.min(room, declared);
        const grown = Buffer.allocUnsafe(room);
        if (body) body.copy(grown, 0, 0, length);
        else if (only) only.copy(grown, 0);
        body = grown;
        only = undefined;
      }
      // A native copy costs more than a loop for a few bytes (bodies of tiny chunks).
      if (chunk.length < 16) for (let i = 0; i < chunk.length; i++) body[length + i] = chunk[i]!;
      else chunk.copy(body, length);
      length = needed;
    };
    req.on('data', (chunk: Buffer) => {
      const before = counted;
      const costs = pieceCost(chunk, framing);
      received += chunk.length;
      counted += costs;
      if (counted > limit) refuse(sqsError('RequestEntityTooLarge', `Request body is larger than ${limit} bytes.`));
      else if (!admission.take(ticket, before, costs)) refuse(bodyBudgetError());
      else if (length === 0) {
        // Kept as it came: copied only if another piece follows.
        only = chunk;
        length = chunk.length;
      } else append(chunk);
    });
    req.on('end', () => resolve(only ?? (body ? body.subarray(0, length) : EMPTY)));
    req.on('error', reject);
    // An abort emits 'close' without 'end': the promise must settle so that the request ends.
    req.on('close', () => {
      if (!req.complete) reject(new BodyAbandoned());
    });
  });
}

const EMPTY = Buffer.alloc(0);

/** The client closed its connection before its body was whole: nobody to answer. */
export class BodyAbandoned extends Error {
  override name = 'BodyAbandoned';

  constructor() {
    super('the client went away before sending its whole body');
  }
}

/**
 * A body refused as it streamed in; the rest of it is being dropped, so the connection may
 * carry on, unless `cut`: then nothing more is read, and the answer closes the connection.
 */
export class BodyRefused extends Error {
  override name = 'BodyRefused';

  constructor(
    readonly error: SqsError,
    readonly cut = false,
  ) {
    super(error.message, { cause: error });
  }
}
