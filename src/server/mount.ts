import type { Cancellation } from '../engine/messages/long-poll.js';
import { SqsError, sqsError } from '../engine/kernel/errors.js';
import { jsonError } from '../protocols/json/json-adapter.js';
import { queryError, wantsJson } from '../protocols/query/query-adapter.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import type { RequestSeen } from './access-log.js';
import type { Area } from './request-guard.js';

/** What the front tells a sub-application about a request besides the request itself. */
export interface Exchange {
  requestId: string;
  /** The client's address (client-address.ts). */
  client: string;
  /** Fires when the client goes away before its answer (a waiting long poll stops). */
  cancelled: Cancellation;
  /** Present when the access log is on: what the sub-application learned, for its line. */
  seen?: RequestSeen;
}

/** Every sub-application answers with this signature; the front writes the answer. */
export type Handler = (req: WireRequest, x: Exchange) => Promise<WireResponse> | WireResponse;

/** How a part of the server words what the front refuses or what fails in it. */
export interface ErrorShape {
  /** The request guard's refusal (request-guard.ts), before the body is read. */
  refusal(message: string, req: WireRequest, requestId: string): WireResponse;
  /** A body refused as it streamed in (too large, over the budget), or a failure while handling. */
  failure(e: unknown, req: WireRequest, requestId: string): WireResponse;
}

/**
 * One entry of the mount table (mount-table.ts). The front serves a request with the first
 * entry that matches it; each entry owns every step of its own (the SQS API its SigV4
 * caller and region, the management API its basic auth), the front only what all share.
 */
export interface SubApp {
  /** For the docs and the reader: sqs, console, management, health, metrics, landing. */
  name: string;
  /** Which rules of the request guard apply. */
  area: Area;
  /** The access log's protocol for a request it serves; the SQS API names json or query itself. */
  logAs: 'http' | 'console';
  /** Whether it serves this request, from the request line and headers (the body is not read yet). */
  matches(req: WireRequest): boolean;
  handle: Handler;
  errors: ErrorShape;
  /** Called as the front stops accepting: ends what would keep a request in flight waiting. */
  close?(): void;
}

/** SQS's errors: JSON when the request named an X-Amz-Target, else Query XML (or JSON when it asked for it). */
export const sqsErrors: ErrorShape = {
  refusal: (message, req, requestId) => sqsErrors.failure(sqsError('AccessDenied', message), req, requestId),
  failure: (e, req, requestId) =>
    req.headers['x-amz-target'] !== undefined ? jsonError(e) : queryError(e, requestId, wantsJson(req)),
};

/** RabbitMQ's management API: `{"error": ..., "reason": ...}`. */
export const managementErrors: ErrorShape = {
  refusal: (message) => ({
    status: 403,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: 'not_authorized', reason: message }),
  }),
  failure: (e) => {
    const status = e instanceof SqsError ? e.status : 500;
    const reason = e instanceof SqsError ? e.message : 'Internal error';
    return {
      status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: status >= 500 ? 'internal_server_error' : 'bad_request', reason }),
      error: e instanceof SqsError ? undefined : e,
    };
  },
};

/** The console refuses in plain text; what fails in it is answered in SQS's shape, which its API calls speak. */
export const consoleErrors: ErrorShape = {
  refusal: (message) => ({ status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: message }),
  failure: sqsErrors.failure,
};
