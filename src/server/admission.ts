import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sqsError } from '../engine/errors.js';
import { jsonError } from '../protocols/json/json-adapter.js';
import { queryError } from '../protocols/query/query-adapter.js';

/**
 * Load shedding. Every request holds a socket (a file descriptor) and its body in memory
 * until it is answered, and a long poll holds them for up to 20 s. Without a bound enough
 * clients exhaust descriptors (new connections are then reset by the kernel, not
 * answered) or memory (the process dies). Past these limits a request is answered at once
 * with 503 ServiceUnavailable, which every SDK retries with back-off.
 *
 * Two bounds, sized from the process's open-file limit:
 * - at the door (`refuse`), the requests being served at once and their bodies' bytes;
 * - in the engine (`maxLongPolls`, checked in message-actions.ts), the long polls waiting
 *   at once: a quarter of the door's budget stays free for sends, deletes and short polls,
 *   so thousands of idle long polls cannot starve the clients doing work.
 */
export interface AdmissionLimits {
  /** Requests being served at once, long polls included. */
  maxRequests: number;
  /**
   * Request bodies held in memory at once, counted as their bytes arrive however they are
   * framed (Content-Length or chunked). The first `smallBodyBytes` of each request are not
   * drawn from it: small requests keep being served while large ones fill the budget, and
   * what those hold together is bounded by `maxRequests`.
   */
  maxBodyBytes: number;
  /** Long polls waiting at once (Engine option `maxLongPolls`). */
  maxLongPolls: number;
  /** Each request may hold this much of its body without drawing from `maxBodyBytes` (0 when absent). */
  smallBodyBytes?: number;
}

/**
 * Limits that fit the open-file limit: a few descriptors stay free for the database, its
 * WAL and shared memory, logs, and the sockets of requests being shed.
 */
export function admissionLimits(fileLimit = openFileLimit(), maxBodyBytes = DEFAULT_BODY_BUDGET): AdmissionLimits {
  const maxRequests = Math.max(64, Math.min(fileLimit - 128, 20_000));
  return {
    maxRequests,
    maxBodyBytes,
    maxLongPolls: Math.min(10_000, Math.floor(maxRequests * 0.75)),
    smallBodyBytes: SMALL_BODY_BYTES,
  };
}

/** `--max-body-memory`'s default: 512 MiB of request bodies in flight. */
export const DEFAULT_BODY_BUDGET = 512 * 1024 * 1024;

/** Each request may hold this much of its body without drawing from the shared budget. */
const SMALL_BODY_BYTES = 64 * 1024;

/** The soft RLIMIT_NOFILE, from /proc on Linux; a common default elsewhere. */
function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) return m[1] === 'unlimited' ? 1_000_000 : Number(m[1]);
  } catch {
    // not Linux
  }
  return 1024;
}

const BODY_BUDGET_SPENT = 'Too much request data in flight';

/** The refusal of a body that outgrew the budget while it streamed in (see `take`). */
export const bodyBudgetError = () =>
  sqsError('ServiceUnavailable', `${BODY_BUDGET_SPENT}; the server is shedding load. Retry with back-off.`);

export class Admission {
  requests = 0;
  bodyBytes = 0;
  shed = 0;
  /** Connections that have sent a request and are still open. */
  sockets = 0;
  private readonly seen = new WeakSet<object>();
  /**
   * Bytes drawn from `maxBodyBytes`, per request that drew any: a request whose body fits
   * in `smallBodyBytes` (nearly all) gets no entry.
   */
  private readonly drawn = new Map<IncomingMessage, number>();

  constructor(readonly limits: AdmissionLimits = admissionLimits()) {}

  private get small(): number {
    return this.limits.smallBodyBytes ?? 0;
  }

  /**
   * Call first thing in the request handler: `if (this.admission.refuse(req, res)) return;`.
   * Returns true after answering 503; otherwise counts the request until `done(req)`.
   */
  refuse(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    if (!this.seen.has(socket)) {
      this.seen.add(socket);
      this.sockets++;
      socket.once('close', () => this.sockets--);
    }
    // Idle keep-alive connections hold descriptors too: past the budget, every answer
    // (503s from the engine included) closes its connection, so that descriptors come back
    // and the kernel can hand over the connections waiting to be accepted.
    if (this.sockets > this.limits.maxRequests) res.shouldKeepAlive = false;
    // A declared length that cannot fit is refused before a byte of it is read.
    const declared = Math.max(0, (Number(req.headers['content-length']) || 0) - this.small);
    if (this.requests >= this.limits.maxRequests || this.bodyBytes + declared > this.limits.maxBodyBytes) {
      this.shed++;
      this.answer(
        req,
        res,
        this.requests >= this.limits.maxRequests ? 'Too many concurrent requests' : BODY_BUDGET_SPENT,
      );
      return true;
    }
    this.requests++;
    return false;
  }

  /**
   * Counts `bytes` more of this request's body as they arrive, `before` being what was read
   * of it until now. False when they do not fit in the budget: the caller stops reading and
   * refuses the request with `bodyBudgetError`.
   */
  take(req: IncomingMessage, before: number, bytes: number): boolean {
    const drawn = Math.max(0, before + bytes - this.small) - Math.max(0, before - this.small);
    if (drawn === 0) return true;
    if (this.bodyBytes + drawn > this.limits.maxBodyBytes) {
      this.shed++;
      return false;
    }
    this.drawn.set(req, (this.drawn.get(req) ?? 0) + drawn);
    this.bodyBytes += drawn;
    return true;
  }

  /** The request admitted by `refuse` has been answered (or abandoned): its body's bytes come back. */
  done(req: IncomingMessage): void {
    this.requests--;
    const drawn = this.drawn.get(req);
    if (drawn === undefined) return;
    this.bodyBytes -= drawn;
    this.drawn.delete(req);
  }

  private answer(req: IncomingMessage, res: ServerResponse, why: string): void {
    const err = sqsError('ServiceUnavailable', `${why}; the server is shedding load. Retry with back-off.`);
    const requestId = randomUUID();
    const response = req.headers['x-amz-target'] !== undefined ? jsonError(err) : queryError(err, requestId);
    // The body is not read, and the socket is better given back: close the connection.
    res.writeHead(response.status, {
      ...response.headers,
      'x-amzn-requestid': requestId,
      'content-length': Buffer.byteLength(response.body),
      connection: 'close',
      'retry-after': '1',
    });
    res.end(response.body);
  }
}
