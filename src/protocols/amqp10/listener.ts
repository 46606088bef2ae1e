import type { Socket } from 'node:net';
import { Amqp10Connection, type Amqp10ConnectionOptions } from './connection.js';

/** The AMQP 1.0 side of the AMQP port: its connections, on the 0-9-1 listener's engine, sign-in and limits. */
export class Amqp10Listener {
  private readonly connections = new Set<Amqp10Connection>();

  constructor(private readonly opts: Amqp10ConnectionOptions) {}

  accept(socket: Socket): void {
    const c = new Amqp10Connection(socket, this.opts);
    this.connections.add(c);
    void c.done.then(() => this.connections.delete(c));
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
