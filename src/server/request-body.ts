import type { IncomingMessage } from 'node:http';
import { sqsError } from '../engine/errors.js';
import { bodyBudgetError, type Admission } from './admission.js';

/** Largest request body accepted: SQS's 1 MiB payloads with room for Query and JSON encoding. */
export const MAX_REQUEST_BODY = 6 * 1024 * 1024;

/**
 * Reads a request's body whole, counting its bytes in the admission budget as they arrive,
 * whether the body is framed by Content-Length or chunked: a body that grows past `limit`
 * (413) or past the budget (503) is refused as soon as it does, and is not read further:
 * the caller answers with `connection: close`, so node closes the connection once the
 * answer is out. (A declared length that cannot fit is refused at the door, admission.ts.)
 * A client that goes away mid-body rejects the promise too, so its bytes are given back.
 */
export function readBody(req: IncomingMessage, limit: number, admission: Admission): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => sqsError('RequestEntityTooLarge', `Request body is larger than ${limit} bytes.`);
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (e: Error) => {
      req.pause();
      req.removeAllListeners('data');
      reject(e);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(tooLarge());
      else if (!admission.take(req, chunk.length)) stop(bodyBudgetError());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
    // An abort emits 'close' without 'end': the promise must settle so that the request ends.
    req.on('close', () => {
      if (!req.complete) reject(new Error('client went away mid-body'));
    });
  });
}
