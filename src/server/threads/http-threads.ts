import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { dispatch, hasAction } from '../../engine/actions/registry.js';
import { sqsError } from '../../engine/kernel/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { Cancellation } from '../../engine/messages/long-poll.js';
import type { RequestContext } from '../../engine/kernel/types.js';
import type { AuthThrottle } from '../../auth/throttle.js';
import { checkSecret } from '../../auth/caller.js';
import type { Credentials } from '../../auth/credentials.js';
import { nullPrototypeMaps } from '../../protocols/json/map-members.js';
import type { RequestTally } from '../management/request-tally.js';
import type { SubApp } from '../mount.js';
import type { Readiness, ReadyAnswer } from '../readiness.js';
import type { ThreadConfig } from './http-worker.js';
import { sharedListener, type SharedListener } from './listen-fd.js';
import { arrivedRequest, wireError, type ToOwner, type ToThread } from './messages.js';

export interface HttpThreadsOptions {
  threads: number;
  host: string;
  port: number;
  log: Logger;
  engine: Engine;
  /** The owner's sub-applications: forwarded requests are served by the one of that name. */
  mounts: SubApp[];
  readiness: Pick<Readiness, 'check'>;
  throttle: AuthThrottle;
  /** --credentials: the secrets, checked here for every thread. */
  credentials?: Credentials;
  tally: Pick<RequestTally, 'count'>;
  /** Everything an HTTP thread needs besides its index, descriptor and port. */
  thread: Omit<ThreadConfig, 'index' | 'threads' | 'fd' | 'port' | 'host'>;
}

/** A restarted thread waits this long, doubling with each failure in a row, up to the maximum. */
const RESTART_MS = 100;
const RESTART_MAX_MS = 5_000;
/** A thread that has run this long without failing starts its next restart from RESTART_MS. */
const STEADY_MS = 30_000;
/** How long start-up waits for a thread to listen. */
const LISTEN_TIMEOUT_MS = 30_000;

/** A long poll's client, on another thread: the thread says when it went away. */
class ForwardedCancel implements Cancellation {
  aborted = false;
  private readonly listeners = new Set<() => void>();
  constructor(readonly client?: string) {}
  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.add(listener);
  }
  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.delete(listener);
  }
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const l of [...this.listeners]) l();
  }
}

/** The owner's view of one HTTP thread. */
class Thread {
  worker?: Worker;
  listening = false;
  startedAt = 0;
  failures = 0;
  /** Its waiting receives, by call id: cancelled when the client goes, or the thread. */
  readonly waiting = new Map<number, ForwardedCancel>();
  outbox: ToThread[] = [];
  flushing = false;
  drained?: () => void;
  constructor(readonly index: number) {}
}

/**
 * `--threads N` on the owner thread (docs/scaling.md): starts N HTTP threads on one
 * listening socket, runs the actions and the whole requests they hand over, restarts a
 * thread that fails, and drains them all on stop. The owner itself accepts no connection.
 */
export class HttpThreads {
  private readonly threads: Thread[];
  private listener?: SharedListener;
  private stopping = false;
  private port = 0;

  constructor(private readonly opts: HttpThreadsOptions) {
    this.threads = Array.from({ length: opts.threads }, (_, i) => new Thread(i + 1));
  }

  async listen(): Promise<string> {
    this.listener = await sharedListener(this.opts.host, this.opts.port);
    this.port = this.listener.address.port;
    try {
      const fds = await this.listener.duplicates(this.threads.length);
      await Promise.all(this.threads.map((t, i) => this.start(t, fds[i]!)));
    } catch (e) {
      // A start that fails leaves no thread running and the port free.
      await this.close(0);
      throw e;
    }
    const { address, family } = this.listener.address;
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${this.port}`;
  }

  /** Not ready while any thread is down, else whatever the store says. */
  ready(): Promise<ReadyAnswer> {
    const down = this.threads.find((t) => !t.listening);
    if (down && !this.stopping)
      return Promise.resolve({
        ready: false,
        reason: `HTTP thread ${down.index} of ${this.threads.length} is restarting`,
      });
    return this.opts.readiness.check();
  }

  /**
   * Every thread stops accepting and lets its requests finish, up to `drainMs` (waiting
   * long polls are answered at once, by the owner's SQS app); then the threads end.
   */
  async close(drainMs: number): Promise<void> {
    this.stopping = true;
    // As one thread's front does: the owner's SQS app answers the waiting long polls.
    for (const app of this.opts.mounts) app.close?.();
    await Promise.all(
      this.threads.map(async (t) => {
        if (!t.worker) return;
        if (t.listening) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            new Promise<void>((resolve) => {
              t.drained = resolve;
              this.post(t, { t: 'close', drainMs });
            }),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs + 1_000))),
          ]);
          clearTimeout(timer);
        }
        await t.worker.terminate();
      }),
    );
    this.listener?.close();
  }

  private start(t: Thread, fd: number): Promise<void> {
    const config: ThreadConfig = {
      ...this.opts.thread,
      index: t.index,
      threads: this.threads.length,
      fd,
      host: this.opts.host,
      port: this.port,
    };
    const worker = new Worker(new URL('./http-worker.js', import.meta.url), { workerData: config });
    t.worker = worker;
    t.listening = false;
    t.startedAt = performance.now();
    let failure: unknown;
    worker.on('message', (batch: ToOwner[]) => {
      for (const m of batch) this.receive(t, m);
    });
    worker.on('error', (err) => (failure = err));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`HTTP thread ${t.index} did not listen`)), LISTEN_TIMEOUT_MS);
      t.drained = undefined;
      const listening = () => {
        clearTimeout(timer);
        resolve();
      };
      worker.once('message', listening);
      worker.on('exit', (code) => {
        clearTimeout(timer);
        worker.off('message', listening);
        reject(failure ?? new Error(`HTTP thread ${t.index} exited (${code})`));
        this.exited(t, worker, failure, code);
      });
    });
  }

  /** A thread ended: its long polls stop; unless the server is stopping, another takes its place. */
  private exited(t: Thread, worker: Worker, failure: unknown, code: number): void {
    if (t.worker !== worker) return;
    t.listening = false;
    t.outbox = [];
    for (const c of t.waiting.values()) c.abort();
    t.waiting.clear();
    t.drained?.();
    if (this.stopping) return;
    if (performance.now() - t.startedAt > STEADY_MS) t.failures = 0;
    const delay = Math.min(RESTART_MS * 2 ** t.failures++, RESTART_MAX_MS);
    this.opts.log.error(
      { err: failure, thread: t.index, exitCode: code, restartInMs: delay },
      'HTTP thread failed; its requests in flight were cut, another thread takes its place',
    );
    setTimeout(() => {
      if (this.stopping) return;
      this.listener!.duplicates(1)
        .then(([fd]) => this.start(t, fd!))
        .catch((err: unknown) => this.opts.log.error({ err, thread: t.index }, 'HTTP thread did not start again'));
    }, delay).unref();
  }

  private receive(t: Thread, m: ToOwner): void {
    switch (m.t) {
      case 'call':
        return this.call(t, m);
      case 'cancel':
        t.waiting.get(m.id)?.abort();
        return;
      case 'request':
        return this.request(t, m);
      case 'ready':
        this.ready().then((answer) => this.post(t, { t: 'ready', id: m.id, answer }));
        return;
      case 'refused':
        this.opts.engine.observer.request(m.action, m.protocol, m.code, m.seconds);
        return;
      case 'tally':
        this.opts.tally.count(m.accountId, m.accessKey, m.client, m.n);
        return;
      case 'secret':
        return this.secret(t, m);
      case 'listening':
        t.listening = true;
        return;
      case 'drained':
        t.drained?.();
        return;
    }
  }

  private call(t: Thread, m: Extract<ToOwner, { t: 'call' }>): void {
    // The adapters checked it; the owner does not run a name it does not serve, whatever a thread sends.
    if (!hasAction(m.action)) {
      const error = sqsError('UnknownOperationException', `The action or operation ${m.action} is not valid.`);
      this.post(t, { t: 'done', id: m.id, error: wireError(error) });
      return;
    }
    const ctx: RequestContext = { ...m.ctx, action: undefined, input: undefined };
    // Structured cloning made every object plain again: the client's maps lose their
    // null prototype on the way, and get it back here, as the adapters gave it (map-members.ts).
    const input = nullPrototypeMaps(m.action, m.input);
    let signal: ForwardedCancel | undefined;
    if (m.action === 'ReceiveMessage') {
      signal = new ForwardedCancel(m.client);
      t.waiting.set(m.id, signal);
    }
    const worker = t.worker;
    dispatch(this.opts.engine, ctx, m.action, input, signal).then(
      (output) => {
        if (signal) t.waiting.delete(m.id);
        if (t.worker === worker) this.post(t, { t: 'done', id: m.id, output });
      },
      (e: unknown) => {
        if (signal) t.waiting.delete(m.id);
        if (t.worker === worker) this.post(t, { t: 'done', id: m.id, error: wireError(e) });
      },
    );
  }

  /** A signed request's secret, checked as one thread checks it (caller.ts), under the one throttle. */
  private secret(t: Thread, m: Extract<ToOwner, { t: 'secret' }>): void {
    let reply: ToThread;
    try {
      const guard = { throttle: this.opts.throttle, client: m.client };
      const accountId = checkSecret(m.claim, () => m.claim.stringToSign, this.opts.credentials!, guard);
      reply = { t: 'done', id: m.id, output: accountId };
    } catch (e) {
      reply = { t: 'done', id: m.id, error: wireError(e) };
    }
    this.post(t, reply);
  }

  private request(t: Thread, m: Extract<ToOwner, { t: 'request' }>): void {
    const app = this.opts.mounts.find((a) => a.name === m.app);
    const req = arrivedRequest(m.req);
    const worker = t.worker;
    const answer = (response: Awaited<ReturnType<SubApp['handle']>>) => {
      if (t.worker === worker) this.post(t, { t: 'answer', id: m.id, response });
    };
    if (!app) {
      answer({ status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found' });
      return;
    }
    const x = { requestId: m.requestId, client: m.client, cancelled: new ForwardedCancel(m.client) };
    Promise.resolve()
      .then(() => app.handle(req, x))
      .then(answer, (e: unknown) => answer(app.errors.failure(e, req, m.requestId)));
  }

  /** What the owner says to a thread in one turn of its event loop goes in one postMessage. */
  private post(t: Thread, m: ToThread): void {
    t.outbox.push(m);
    if (t.flushing) return;
    t.flushing = true;
    setImmediate(() => {
      t.flushing = false;
      const batch = t.outbox;
      t.outbox = [];
      if (batch.length) t.worker?.postMessage(batch);
    });
  }
}
