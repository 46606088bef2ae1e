import type { MaintenanceStore } from '../engine/store/maintenance.js';
import type { WireResponse } from '../protocols/wire.js';

/** How long an answer of the store is reused: a load balancer polling often costs nothing. */
const CACHE_MS = 1000;

export interface ReadyAnswer {
  ready: boolean;
  /** Why not, when not ready. */
  reason?: string;
}

/**
 * `GET /ready`: whether this node should get traffic. It asks the store
 * (`maintenance.ready`), at most once per second however often it is polled (concurrent
 * checks share one question), and answers "not ready" from the moment shutdown begins,
 * so a load balancer stops sending requests while the server drains.
 */
export class Readiness {
  private answer?: Promise<ReadyAnswer>;
  private answeredAt = -Infinity;
  private stopping = false;

  constructor(
    private readonly store: { maintenance: Pick<MaintenanceStore, 'ready'> },
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** From now on every check answers "shutting down". */
  shuttingDown(): void {
    this.stopping = true;
  }

  check(): Promise<ReadyAnswer> {
    if (this.stopping) return Promise.resolve({ ready: false, reason: 'the server is shutting down' });
    if (this.answer && this.now() - this.answeredAt < CACHE_MS) return this.answer;
    this.answeredAt = Infinity; // in flight: shared until it settles
    this.answer = this.store.maintenance
      .ready()
      .then(
        (): ReadyAnswer => ({ ready: true }),
        (e: unknown): ReadyAnswer => ({ ready: false, reason: e instanceof Error ? e.message : String(e) }),
      )
      .finally(() => (this.answeredAt = this.now()));
    return this.answer;
  }
}

/** The answer to `GET|HEAD /health` (liveness: the process answers) when `path` is that, else to `/ready`. */
export async function healthAnswer(path: string, readiness: Pick<Readiness, 'check'>): Promise<WireResponse> {
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  if (path === '/health') return { status: 200, headers, body: '{"status":"ok"}' };
  const a = await readiness.check();
  return a.ready
    ? { status: 200, headers, body: '{"status":"ready"}' }
    : { status: 503, headers, body: JSON.stringify({ status: 'unavailable', reason: a.reason }) };
}
