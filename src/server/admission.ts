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
  /** Request bodies in flight, by Content-Length. */
  maxBodyBytes: number;
  /** Long polls waiting at once (Engine option `maxLongPolls`). */
  maxLongPolls: number;
}

/**
 * Limits that fit the open-file limit: a few descriptors stay free for the database, its
 * WAL and shared memory, logs, and the sockets of requests being shed.
 */
export function admissionLimits(fileLimit = openFileLimit()): AdmissionLimits {
  const maxRequests = Math.max(64, Math.min(fileLimit - 128, 20_000));
  return { maxRequests, maxBodyBytes: 512 * 1024 * 1024, maxLongPolls: Math.min(10_000, Math.floor(maxRequests * 0.75)) };
}

/** The soft RLIMIT_NOFILE, from /proc on Linux; a common default elsewhere. */
export function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) return m[1] === 'unlimited' ? 1_000_000 : Number(m[1]);
  } catch {
    // not Linux
  }
  return 1024;
}

export class Admission {
  requests = 0;
  bodyBytes = 0;
  shed = 0;
  /** Connections that have sent a request and are still open. */
  sockets = 0;
  private readonly seen = new WeakSet<object>();

  constructor(readonly limits: AdmissionLimits = admissionLimits()) {}

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
    const bytes = Number(req.headers['content-length']) || 0;
    if (this.requests >= this.limits.maxRequests || this.bodyBytes + bytes > this.limits.maxBodyBytes) {
      this.shed++;
      this.answer(req, res, this.requests >= this.limits.maxRequests ? 'Too many concurrent requests' : 'Too much request data in flight');
      return true;
    }
    this.requests++;
    this.bodyBytes += bytes;
    return false;
  }

  /** The request admitted by `refuse` has been answered (or abandoned). */
  done(req: IncomingMessage): void {
    this.requests--;
    this.bodyBytes -= Number(req.headers['content-length']) || 0;
  }

  private answer(req: IncomingMessage, res: ServerResponse, why: string): void {
    const err = sqsError('ServiceUnavailable', `${why}; the server is shedding load. Retry with back-off.`);
    const requestId = randomUUID();
    const response = req.headers['x-amz-target'] !== undefined ? jsonError(err) : queryError(err, requestId);
    // The body is not read, and the socket is better given back: close the connection.
    res.writeHead(response.status, {
      ...response.headers, 'x-amzn-requestid': requestId, 'content-length': Buffer.byteLength(response.body), connection: 'close', 'retry-after': '1',
    });
    res.end(response.body);
  }
}
