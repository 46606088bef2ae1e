import { AmqpBroker } from '../../engine/amqp/broker.js';
import type { Timer } from '../../engine/kernel/clock.js';
import type { Engine } from '../../engine/engine.js';
import type { AmqpRegistry } from './registry.js';

/** How often unused queues are looked for: x-expires is in milliseconds, so often. */
const CHECK_MS = 250;

/**
 * x-expires: a queue unused for its period (no consumer, no declaration, no basic.get)
 * is deleted with its messages, which are not dead-lettered, as RabbitMQ does. The
 * clock of use is this node's, as RabbitMQ's is per queue process: at start every
 * stored queue with x-expires is armed afresh, as RabbitMQ does when it recovers one.
 * Time is the engine's clock, the registry's too, so a manual clock moves it.
 */
export class QueueExpiry {
  private timer?: Timer;
  private running = false;

  constructor(
    private readonly engine: Engine,
    private readonly registry: AmqpRegistry,
    private readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void },
  ) {}

  async start(): Promise<void> {
    for (const q of await this.engine.store.queues.all()) {
      const expires = (await this.engine.store.exchanges.queue(q.id))?.arguments['x-expires'];
      if (typeof expires === 'number')
        this.registry.armExpiry({ queueId: q.id, accountId: q.accountId, name: q.name, expiresMs: expires });
    }
    const tick = () => {
      void this.check().finally(() => {
        if (this.timer) this.timer = this.engine.clock.schedule(CHECK_MS, tick);
      });
    };
    this.timer = this.engine.clock.schedule(CHECK_MS, tick);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Deletes the queues unused for their x-expires period now (the timer calls it; tests may too). */
  async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const e of this.registry.expired()) {
        const broker = new AmqpBroker(this.engine, e.accountId);
        const queue = await this.engine.store.queues.get({
          accountId: e.accountId,
          region: this.engine.region,
          name: e.name,
        });
        if (queue?.id === e.queueId) await broker.deleteQueue(queue, false);
        this.registry.queueDeleted(e.queueId);
        this.log.info(
          { queue: e.name, account: e.accountId, expiresMs: e.expiresMs },
          'queue deleted: unused for its x-expires period',
        );
      }
    } catch (err) {
      this.log.warn({ err }, 'x-expires check failed');
    } finally {
      this.running = false;
    }
  }
}
