import type { MessagePort } from 'node:worker_threads';
import type { ActionInput } from '../../engine/actions/registry.js';
import type { Cancellation } from '../../engine/messages/long-poll.js';
import type { RequestContext } from '../../engine/kernel/types.js';
import type { WireRequest, WireResponse } from '../../protocols/wire.js';
import type { SignedClaim } from '../../auth/caller.js';
import type { ReadyAnswer } from '../readiness.js';
import type { SqsBackend } from '../sqs-app.js';
import { callContext, errorOf, type ToOwner, type ToThread } from './messages.js';

interface Pending {
  resolve(value: never): void;
  reject(e: Error): void;
}

/**
 * An HTTP thread's side of the hand-off to the owner thread: each call gets an id and a
 * promise; what the thread has to say in one turn of its event loop goes in one
 * postMessage (setImmediate runs after the turn's I/O callbacks, so the requests parsed in
 * one poll share it), and the owner's answers come back the same way.
 */
export class OwnerLink implements SqsBackend {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private outbox: ToOwner[] = [];
  private flushing = false;
  /** Called when the owner asks this thread to stop. */
  onClose?: (drainMs: number) => void;

  constructor(private readonly port: MessagePort) {
    port.on('message', (batch: ToThread[]) => {
      for (const m of batch) this.receive(m);
    });
  }

  /** The engine's dispatch, on the owner thread. */
  readonly run = (
    ctx: RequestContext,
    action: string,
    input: ActionInput,
    signal?: Cancellation,
  ): Promise<Record<string, unknown>> => {
    // As dispatch sets them here in one thread: the SQS app and the access log read them.
    ctx.action = action;
    ctx.input = input;
    const id = this.nextId++;
    // Only a receive may wait on its client (message-actions.ts); a listener on every
    // request's response would cost a plain send (http-server.ts, ClientGone).
    const waits = signal !== undefined && action === 'ReceiveMessage';
    const call = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as never, reject });
      this.post({ t: 'call', id, ctx: callContext(ctx), action, input, client: waits ? signal.client : undefined });
    });
    if (!waits) return call;
    const onAbort = () => this.post({ t: 'cancel', id });
    signal.addEventListener('abort', onAbort);
    return call.finally(() => signal.removeEventListener('abort', onAbort));
  };

  readonly observer = {
    request: (action: string, protocol: string, code: string, seconds: number) =>
      this.post({ t: 'refused', action, protocol, code, seconds }),
  };

  /** The owner releases every waiting long poll itself as it stops. */
  releaseLongPolls(): void {}

  /** A whole request for a sub-application on the owner. */
  forward(app: string, req: WireRequest, requestId: string, client: string): Promise<WireResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as never, reject });
      this.post({ t: 'request', id, app, req, requestId, client });
    });
  }

  /** The owner checks the secret, under the throttle every thread and interface shares. */
  checkSecret(claim: SignedClaim, client: string): Promise<string> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as never, reject });
      this.post({ t: 'secret', id, claim, client });
    });
  }

  ready(): Promise<ReadyAnswer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as never, reject });
      this.post({ t: 'ready', id });
    });
  }

  /**
   * A request by this key from this client, for the management API's tally. A client's
   * requests come in runs: a run travels as one entry with its count.
   */
  tally(accountId: string, accessKey: string | undefined, client: string): void {
    const run = this.tallyRun;
    if (run && run.accountId === accountId && run.accessKey === accessKey && run.client === client) {
      run.n++;
      return;
    }
    this.tallyRun = { t: 'tally', accountId, accessKey, client, n: 1 };
    this.post(this.tallyRun);
  }

  private tallyRun?: Extract<ToOwner, { t: 'tally' }>;

  post(m: ToOwner): void {
    this.outbox.push(m);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(this.flush);
  }

  private readonly flush = () => {
    this.flushing = false;
    this.tallyRun = undefined;
    const batch = this.outbox;
    this.outbox = [];
    this.port.postMessage(batch);
  };

  private receive(m: ToThread): void {
    switch (m.t) {
      case 'done':
      case 'answer':
      case 'ready': {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.t === 'done') {
          if (m.error) p.reject(errorOf(m.error));
          else p.resolve(m.output as never);
        } else if (m.t === 'answer') p.resolve(m.response as never);
        else p.resolve(m.answer as never);
        return;
      }
      case 'close':
        this.onClose?.(m.drainMs);
        return;
    }
  }
}
