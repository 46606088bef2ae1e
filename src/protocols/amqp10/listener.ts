import type { Socket } from 'node:net';
import type { AmqpConnectionView } from '../amqp/live-view.js';
import { Amqp10Connection, type Amqp10ConnectionOptions } from './connection.js';
import { amqp10ConnectionView } from './live-view.js';

/** The AMQP 1.0 side of the AMQP port: its connections, on the 0-9-1 listener's engine, sign-in and limits. */
export class Amqp10Listener {
  private readonly connections = new Set<Amqp10Connection>();

  constructor(private readonly opts: Amqp10ConnectionOptions) {}

  accept(socket: Socket): void {
    const c = new Amqp10Connection(socket, this.opts);
    this.connections.add(c);
    void c.done.then(() => this.connections.delete(c));
  }

  /** Open connections and their attached links. */
  counts(): { amqp10: number; amqp10Links: number } {
    let amqp10 = 0;
    let amqp10Links = 0;
    for (const c of this.connections) {
      if (!c.opened) continue;
      amqp10++;
      for (const s of c.sessionList()) amqp10Links += s.linkCount;
    }
    return { amqp10, amqp10Links };
  }

  /** The account's open 1.0 connections, as the management API shows them. */
  views(accountId: string): AmqpConnectionView[] {
    const out: AmqpConnectionView[] = [];
    for (const c of this.connections) {
      const view = c.login?.account === accountId ? amqp10ConnectionView(c) : undefined;
      if (view) out.push(view);
    }
    return out;
  }

  /** Closes the account's connection of that name with `amqp:connection:forced`; false when there is none. */
  closeConnection(accountId: string, name: string, reason: string): boolean {
    const c = [...this.connections].find((x) => x.login?.account === accountId && x.stats.name === name);
    c?.forceClose(reason);
    return c !== undefined;
  }

  /** Ends every connection; their unsettled deliveries go back to their queues. */
  async close(): Promise<void> {
    const done = [...this.connections].map((c) => {
      c.socket.destroy();
      return c.done;
    });
    await Promise.all(done);
  }
}
