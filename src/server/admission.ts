import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../auth/throttle.js';
import { sqsError } from '../engine/kernel/errors.js';
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
 * - at the door (`admit`), the requests being served at once and their bodies' bytes;
 * - in the engine (`maxLongPolls`, checked in message-actions.ts), the long polls waiting
 *   at once: a quarter of the door's budget stays free for sends, deletes and short polls,
 *   so thousands of idle long polls cannot starve the clients doing work.
 *
 * Until its body is whole nobody knows who sent a request (SigV4 signs the body), so what
 * a request holds before then is bounded per client address (IPv6 by its /64): the
 * connections it keeps open, its requests still sending their bodies, and their bytes. One
 * address cannot take the shared pool, and requests still sending their bodies, from all
 * addresses together, take at most three quarters of it: the rest stays for requests whose
 * body is whole, which are authenticated (or refused) at once.
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
  /** Connections one client address may keep open; more are closed as they are accepted. */
  maxConnectionsPerClient?: number;
  /** Requests still sending their bodies, all clients together (¾ of `maxRequests` by default). */
  maxUnfinished?: number;
  /** Requests of one client address still sending their bodies. */
  maxUnfinishedPerClient?: number;
  /** Bytes of `maxBodyBytes` one client address may hold (a quarter by default). */
  maxBodyBytesPerClient?: number;
}

/** The per-client bounds the flags may set (`--max-connections-per-client`, `--max-unfinished-requests-per-client`). */
export type ClientLimits = Pick<AdmissionLimits, 'maxConnectionsPerClient' | 'maxUnfinishedPerClient'>;

/**
 * Limits that fit the open-file limit: a few descriptors stay free for the database, its
 * WAL and shared memory, logs, and the sockets of requests being shed.
 */
export function admissionLimits(
  fileLimit = openFileLimit(),
  maxBodyBytes = DEFAULT_BODY_BUDGET,
  perClient: ClientLimits = {},
  share = 1,
): AdmissionLimits {
  const maxRequests = Math.max(64, Math.min(fileLimit - 128, 20_000));
  // One of `share` HTTP threads (--threads): every limit is split between them, the
  // process's totals (descriptors, body memory) and what one address may hold, so that N
  // threads together allow what one does (an address's connections spread over them).
  const ours = Math.max(16, Math.floor(maxRequests / share));
  // A thread's share of body memory holds at least what one thread's would up to 32 MiB, so
  // that an address's quarter of it still takes a largest request (6 MiB) whole: a small
  // --max-body-memory over many threads is then exceeded, up to that much per thread.
  const bodyBytes = Math.max(Math.floor(maxBodyBytes / share), Math.min(maxBodyBytes, MIN_THREAD_BODY_BYTES));
  const perThread = (n: number) => Math.max(1, Math.ceil(n / share));
  return {
    maxRequests: ours,
    maxBodyBytes: bodyBytes,
    maxLongPolls: Math.min(10_000, Math.floor(ours * 0.75)),
    smallBodyBytes: SMALL_BODY_BYTES,
    maxConnectionsPerClient: perThread(perClient.maxConnectionsPerClient ?? Math.max(32, Math.floor(maxRequests / 4))),
    maxUnfinished: Math.floor(ours * 0.75),
    maxUnfinishedPerClient: perThread(perClient.maxUnfinishedPerClient ?? Math.max(16, Math.floor(maxRequests / 8))),
    maxBodyBytesPerClient: Math.floor(bodyBytes / 4),
  };
}

/** The least body memory one of several HTTP threads takes (admissionLimits). */
const MIN_THREAD_BODY_BYTES = 32 * 1024 * 1024;

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
/** How long a connection over its address's share has to send the request its 503 answers. */
const OVER_SHARE_MS = 5_000;
const CLIENT_BODY_BUDGET_SPENT = 'Too much request data in flight from your address';

/** The refusal of a body that outgrew the budget while it streamed in (see `take`). */
export const bodyBudgetError = () =>
  sqsError('ServiceUnavailable', `${BODY_BUDGET_SPENT}; the server is shedding load. Retry with back-off.`);

/** What one client address holds at the door. */
interface ClientBudget {
  key: string;
  connections: number;
  unfinished: number;
  bodyBytes: number;
}

/** One admitted request's share of the budgets, given back by `Admission.done`. */
export interface Ticket {
  readonly client: ClientBudget;
  /** Bytes drawn from `maxBodyBytes`. */
  drawn: number;
  /** Counted among the unfinished requests until its body is whole (or it ends). */
  unfinished: boolean;
}

export class Admission {
  requests = 0;
  bodyBytes = 0;
  shed = 0;
  /** Connections that have sent a request and are still open. */
  sockets = 0;
  /** Requests still sending their bodies. */
  unfinished = 0;
  /** Connections past their address's share (see `connected`). */
  refusedConnections = 0;
  private readonly seen = new WeakSet<object>();
  private readonly overShare = new WeakSet<Socket>();
  /** By address key (src/auth/throttle.ts's addressKey); an entry lives while it holds anything. */
  private readonly clients = new Map<string, ClientBudget>();
  private lastAddress?: string;
  private lastKey = '';

  /** `exempt`: peers whose connections are not counted (trusted proxies carry many clients). */
  constructor(
    readonly limits: AdmissionLimits = admissionLimits(),
    private readonly exempt: (peer: string) => boolean = () => false,
  ) {}

  private get small(): number {
    return this.limits.smallBodyBytes ?? 0;
  }

  /**
   * Call on the server's `connection` event. A connection past `maxConnectionsPerClient`
   * from its address is over its share: its request is answered 503 and the connection
   * closed (a clean refusal SDKs retry, where closing it unread would be a reset), and
   * one that sends none within OVER_SHARE_MS is closed, so its descriptor comes back.
   */
  connected(socket: Socket): void {
    const peer = socket.remoteAddress ?? '';
    if (this.exempt(peer)) return;
    const client = this.client(peer);
    client.connections++;
    socket.once('close', () => {
      client.connections--;
      this.forget(client);
    });
    if (client.connections <= (this.limits.maxConnectionsPerClient ?? Number.POSITIVE_INFINITY)) return;
    this.refusedConnections++;
    this.overShare.add(socket);
    const timer = setTimeout(() => socket.destroy(), OVER_SHARE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }

  /**
   * Call first thing in the request handler, with the client's address (client-address.ts):
   * `const ticket = this.admission.admit(req, res, client); if (!ticket) return;`. Answers
   * 503 and returns undefined when a budget is spent; otherwise the request is counted
   * until `done(ticket)`.
   */
  admit(req: IncomingMessage, res: ServerResponse, address: string): Ticket | undefined {
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
    const client = this.client(address);
    // A declared length that cannot fit is refused before a byte of it is read.
    const declared = Math.max(0, (Number(req.headers['content-length']) || 0) - this.small);
    const why = this.overShare.has(socket)
      ? 'Too many connections from your address'
      : this.requests >= this.limits.maxRequests
        ? 'Too many concurrent requests'
        : this.bodyBytes + declared > this.limits.maxBodyBytes
          ? BODY_BUDGET_SPENT
          : client.unfinished >= (this.limits.maxUnfinishedPerClient ?? Number.POSITIVE_INFINITY)
            ? 'Too many unfinished requests from your address'
            : this.unfinished >= (this.limits.maxUnfinished ?? Number.POSITIVE_INFINITY)
              ? 'Too many unfinished requests'
              : client.bodyBytes + declared > (this.limits.maxBodyBytesPerClient ?? Number.POSITIVE_INFINITY)
                ? CLIENT_BODY_BUDGET_SPENT
                : undefined;
    if (why !== undefined) {
      this.shed++;
      this.forget(client);
      this.answer(req, res, why);
      return undefined;
    }
    this.requests++;
    this.unfinished++;
    client.unfinished++;
    return { client, drawn: 0, unfinished: true };
  }

  /**
   * Counts `bytes` more of this request's body as they arrive, `before` being what was read
   * of it until now. False when they do not fit in the budget (the shared one or the
   * client's): the caller stops reading and refuses the request with `bodyBudgetError`.
   */
  take(ticket: Ticket, before: number, bytes: number): boolean {
    const drawn = Math.max(0, before + bytes - this.small) - Math.max(0, before - this.small);
    if (drawn === 0) return true;
    if (
      this.bodyBytes + drawn > this.limits.maxBodyBytes ||
      ticket.client.bodyBytes + drawn > (this.limits.maxBodyBytesPerClient ?? Number.POSITIVE_INFINITY)
    ) {
      this.shed++;
      return false;
    }
    ticket.drawn += drawn;
    ticket.client.bodyBytes += drawn;
    this.bodyBytes += drawn;
    return true;
  }

  /** The request's body is whole (or will not be read): it no longer counts as unfinished. */
  bodyRead(ticket: Ticket): void {
    if (!ticket.unfinished) return;
    ticket.unfinished = false;
    this.unfinished--;
    ticket.client.unfinished--;
  }

  /** The request admitted by `admit` has been answered (or abandoned): its budgets come back. */
  done(ticket: Ticket): void {
    this.bodyRead(ticket);
    this.requests--;
    if (ticket.drawn > 0) {
      this.bodyBytes -= ticket.drawn;
      ticket.client.bodyBytes -= ticket.drawn;
      ticket.drawn = 0;
    }
    this.forget(ticket.client);
  }

  private client(address: string): ClientBudget {
    // Most requests come over a connection that sent the one before: the same address.
    if (address !== this.lastAddress) {
      this.lastAddress = address;
      this.lastKey = addressKey(address);
    }
    let client = this.clients.get(this.lastKey);
    if (!client) {
      client = { key: this.lastKey, connections: 0, unfinished: 0, bodyBytes: 0 };
      this.clients.set(client.key, client);
    }
    return client;
  }

  /** Drops a client's entry once it holds nothing. */
  private forget(client: ClientBudget): void {
    if (client.connections === 0 && client.unfinished === 0 && client.bodyBytes === 0) this.clients.delete(client.key);
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
