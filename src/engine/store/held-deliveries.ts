/**
 * Messages delivered to AMQP consumers and not yet settled, by the process that holds
 * them. An AMQP delivery's receipt token names its holder (`amqp.<holder>.<random>`), so
 * when a process dies (SIGKILL, a crash, a lost host) its deliveries can be returned to
 * their queues at once, as RabbitMQ returns a dead connection's, instead of after the
 * 30-minute consumer timeout. A holder is alive while its process has the store open.
 */
export interface HeldDeliveryStore {
  /** Other processes share this store (PostgreSQL): their deliveries must be told apart, and checked again while running. */
  readonly shared: boolean;
  /** Marks `holder` (this process) alive for as long as the store is open, where other processes can see it. */
  register(holder: string, now: number): Promise<void>;
  /** Holders that may still hold deliveries, other than this process's, and whether each is alive. */
  holders(now: number): Promise<HolderState[]>;
  /**
   * Returns the deliveries `holder` holds to their queues (visible at once, at their
   * original position; receive counts kept, so their next delivery is a redelivery) and
   * forgets the holder. Refused (`alive`) while the holder is alive.
   */
  release(holder: string, now: number): Promise<{ alive: true } | { alive: false; released: ReleasedCount[] }>;
}

export interface HolderState {
  holder: string;
  alive: boolean;
}

export interface ReleasedCount {
  queueId: number;
  count: number;
}

/** The receipt token prefix of a holder's deliveries; holders are hex, so it is also a LIKE pattern. */
export const holderPrefix = (holder: string) => `amqp.${holder}.`;
export const HOLDER = /^[0-9a-f]{16}$/;
