import { randomBytes } from 'node:crypto';
import type { Clock, Timer } from '../kernel/clock.js';
import type { Log } from '../context/engine-context.js';
import { errors } from '../kernel/errors.js';
import { newReceiptToken } from '../messages/receipt.js';
import { HOLDER, holderPrefix, type HolderState, type ReleasedCount } from '../store/held-deliveries.js';
import type { Store } from '../store/store.js';

/** How often a node of a shared store looks for nodes that died while it runs. */
const CHECK_MS = 10_000;

/**
 * RabbitMQ's redelivery after a crash: every AMQP delivery's receipt token names this
 * process (a random holder id, new at each start), and at start-up the deliveries held
 * by processes that are gone go back to their queues at once, with their receive counts
 * (so `redelivered` is set and x-death is kept), instead of after the consumer timeout.
 * Nodes sharing a PostgreSQL store check again every CHECK_MS, so a node that dies while
 * the others run has its deliveries returned within seconds. A channel or connection
 * that closes returns its own deliveries at once (src/protocols/amqp/channel.ts).
 */
export class DeliveryHolders {
  readonly holder = randomBytes(8).toString('hex');
  private timer?: Timer;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Log,
  ) {}

  /** The receipt token of a new AMQP delivery. */
  readonly newToken = (): string => holderPrefix(this.holder) + newReceiptToken();

  /** Registers this process, then releases what gone processes held; before the AMQP listener opens. */
  async start(): Promise<void> {
    await this.store.heldDeliveries.register(this.holder, this.clock.now());
    await this.releaseGone();
    if (!this.store.heldDeliveries.shared) return;
    const tick = () => {
      this.store.heldDeliveries
        .register(this.holder, this.clock.now())
        .then(() => this.releaseGone())
        .catch((err) => this.log.error({ err }, 'checking for AMQP deliveries held by stopped nodes failed'))
        .finally(() => {
          if (this.timer) this.timer = this.clock.schedule(CHECK_MS, tick);
        });
    };
    this.timer = this.clock.schedule(CHECK_MS, tick);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Releases the deliveries of every holder that is gone; returns how many. */
  async releaseGone(): Promise<number> {
    let total = 0;
    for (const h of await this.store.heldDeliveries.holders(this.clock.now())) {
      if (h.alive) continue;
      const r = await this.store.heldDeliveries.release(h.holder, this.clock.now());
      if (!r.alive) total += this.logged(h.holder, r.released);
    }
    return total;
  }

  /** The holders other than this process, for operators (ReleaseAmqpDeliveries). */
  holders(): Promise<HolderState[]> {
    return this.store.heldDeliveries.holders(this.clock.now());
  }

  /** An operator's release of one holder's deliveries: refused while it is alive. */
  async release(holder: string): Promise<number> {
    if (!HOLDER.test(holder))
      throw errors.invalidParameterValue('Holder must be 16 hexadecimal digits, as ReleaseAmqpDeliveries lists them.');
    const r = await this.store.heldDeliveries.release(holder, this.clock.now());
    if (r.alive)
      throw errors.invalidParameterValue(
        `Holder ${holder} is a running process; its deliveries are returned when its consumers close.`,
      );
    return this.logged(holder, r.released);
  }

  private logged(holder: string, released: ReleasedCount[]): number {
    const n = released.reduce((s, r) => s + r.count, 0);
    if (n > 0)
      this.log.info(
        { holder, released: n, queues: released.length },
        'returned unacknowledged AMQP deliveries of a stopped process to their queues',
      );
    return n;
  }
}
