import type { IncomingMessage } from 'node:http';
import { sqsError, type SqsError } from '../engine/errors.js';
import { bodyBudgetError, type Admission } from './admission.js';

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
 * Reads a request's body whole, counting its bytes in the admission budget as they arrive,
 * whether the body is framed by Content-Length or chunked: a body that grows past `limit`
 * (413) or past the budget (503) is refused as soon as it does. Nothing more of it is kept;
 * the rest is dropped as it arrives (up to DISCARD_LIMIT), and the connection may serve the
 * next request once the body ends. (A declared length that cannot fit is refused at the
 * door, admission.ts.) A client that goes away mid-body rejects the promise too, so its
 * bytes are given back.
 */
export function readBody(req: IncomingMessage, limit: number, admission: Admission): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => sqsError('RequestEntityTooLarge', `Request body is larger than ${limit} bytes.`);
    const chunks: Buffer[] = [];
    let size = 0;
    const refuse = (e: SqsError) => {
      chunks.length = 0;
      req.removeAllListeners('data');
      let dropped = 0;
      req.on('data', (chunk: Buffer) => {
        dropped += chunk.length;
        if (dropped > DISCARD_LIMIT) req.socket.destroy();
      });
      reject(new BodyRefused(e));
    };
    req.on('data', (chunk: Buffer) => {
      const before = size;
      size += chunk.length;
      if (size > limit) refuse(tooLarge());
      else if (!admission.take(req, before, chunk.length)) refuse(bodyBudgetError());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
    // An abort emits 'close' without 'end': the promise must settle so that the request ends.
    req.on('close', () => {
      if (!req.complete) reject(new BodyAbandoned());
    });
  });
}

/** The client closed its connection before its body was whole: nobody to answer. */
export class BodyAbandoned extends Error {
  override name = 'BodyAbandoned';

  constructor() {
    super('the client went away before sending its whole body');
  }
}

/** A body refused as it streamed in; the rest of it is being dropped, so the connection may carry on. */
export class BodyRefused extends Error {
  override name = 'BodyRefused';

  constructor(readonly error: SqsError) {
    super(error.message, { cause: error });
  }
}
