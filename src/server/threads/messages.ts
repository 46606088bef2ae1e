import { SqsError } from '../../engine/kernel/errors.js';
import type { RequestContext } from '../../engine/kernel/types.js';
import type { WireRequest, WireResponse } from '../../protocols/wire.js';
import type { SignedClaim } from '../../auth/caller.js';
import { Throttled } from '../../auth/sigv4.js';
import type { ReadyAnswer } from '../readiness.js';

/**
 * What an HTTP thread and the owner thread say to each other (docs/scaling.md). Every
 * message is one entry of an array: each side gathers what it has to say in one turn of
 * its event loop and posts the array once, so a busy thread pays one postMessage for many
 * requests. The entries are structured-cloned: plain data, no classes.
 */

/** HTTP thread → owner. */
export type ToOwner =
  /** Run an SQS action (registry.ts's dispatch) and answer `done` with the same id. */
  | { t: 'call'; id: number; ctx: CallContext; action: string; input: Record<string, unknown>; client?: string }
  /** The client of call `id` went away: a waiting long poll stops. */
  | { t: 'cancel'; id: number }
  /** A whole request for a sub-application that lives on the owner (console, management, metrics). */
  | { t: 'request'; id: number; app: string; req: WireRequest; requestId: string; client: string }
  /** Is the server ready (the store, and every HTTP thread)? */
  | { t: 'ready'; id: number }
  /** A request refused before an action, for redrive_requests_total. */
  | { t: 'refused'; action: string; protocol: string; code: string; seconds: number }
  /** `n` requests in a row by this access key from this client, for the management API's tally. */
  | { t: 'tally'; accountId: string; accessKey: string | undefined; client: string; n: number }
  /** Check a signed request's secret under the owner's throttle; `done` answers with the account. */
  | { t: 'secret'; id: number; claim: SignedClaim; client: string }
  /** The thread listens (its first message), or has drained after `close`. */
  | { t: 'listening' }
  | { t: 'drained' };

/** Owner → HTTP thread. */
export type ToThread =
  | { t: 'done'; id: number; output?: unknown; error?: WireError }
  | { t: 'answer'; id: number; response: WireResponse }
  | { t: 'ready'; id: number; answer: ReadyAnswer }
  /** Stop accepting, let what is in flight finish (up to `drainMs`), then say `drained`. */
  | { t: 'close'; drainMs: number };

/** The request's context as it travels: the fields an action reads. */
export type CallContext = Pick<
  RequestContext,
  'accountId' | 'region' | 'baseUrl' | 'requestId' | 'traceHeader' | 'protocol'
>;

export function callContext(ctx: RequestContext): CallContext {
  return {
    accountId: ctx.accountId,
    region: ctx.region,
    baseUrl: ctx.baseUrl,
    requestId: ctx.requestId,
    traceHeader: ctx.traceHeader,
    protocol: ctx.protocol,
  };
}

/** An action's failure as it travels: an SqsError keeps its fields; anything else is an internal failure. */
export type WireError =
  | {
      sqs: true;
      type: string;
      code: string;
      status: number;
      message: string;
      senderFault: boolean;
      /** A throttled secret check's Retry-After. */
      retryAfterSeconds?: number;
    }
  | { sqs: false; message: string; stack?: string };

export function wireError(e: unknown): WireError {
  if (e instanceof Throttled) return { ...sqsFields(e), retryAfterSeconds: e.retryAfterSeconds };
  if (e instanceof SqsError) return sqsFields(e);
  const err = e instanceof Error ? e : new Error(String(e));
  return { sqs: false, message: err.message, stack: err.stack };
}

const sqsFields = (e: SqsError): Extract<WireError, { sqs: true }> => ({
  sqs: true,
  type: e.type,
  code: e.code,
  status: e.status,
  message: e.message,
  senderFault: e.senderFault,
});

export function errorOf(w: WireError): Error {
  if (w.sqs && w.retryAfterSeconds !== undefined) return new Throttled(w.retryAfterSeconds);
  if (w.sqs) return new SqsError(w.type, w.code, w.status, w.message, w.senderFault);
  const err = new Error(`on the owner thread: ${w.message}`);
  if (w.stack) err.stack = w.stack;
  return err;
}

/**
 * A request body or headers after structured cloning: the body arrives as a Uint8Array,
 * the headers as a plain object (node:http makes them null-prototype: so again here).
 */
export function arrivedRequest(req: WireRequest): WireRequest {
  const body = req.body as Uint8Array;
  return {
    ...req,
    headers: Object.setPrototypeOf(req.headers, null) as WireRequest['headers'],
    body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  };
}
