/** What the orchestrator (run.ts) and a load child (load.ts) say to each other over IPC. */

export type LoadKind =
  | 'send'
  | 'send-wrk'
  | 'batch'
  | 'cycle'
  | 'cycle-batch'
  | 'fifo-cycle'
  | 'preload'
  | 'drain'
  | 'rabbit-publish'
  | 'rabbit-cycle'
  | 'pgboss-cycle';

export interface LoadSpec {
  kind: LoadKind;
  /** Server base URL for HTTP kinds, amqp:// URL for RabbitMQ kinds. */
  target: string;
  /**
   * Every node's base URL when several servers share one store (Postgres); the load is
   * split evenly over them, connection by connection. Absent: `target` alone.
   */
  targets?: string[];
  /** SQS queue URL (HTTP kinds) or queue name (RabbitMQ kinds). */
  queue: string;
  /** Concurrent senders: HTTP connections / publishers. */
  producers: number;
  /** Concurrent receivers (cycle and drain kinds). */
  consumers: number;
  bodyBytes: number;
  warmupSeconds: number;
  /** The measured window; for `preload` and `drain`, the most it may last (they end when done). */
  seconds: number;
  /** Caps the total send rate in messages/s (the latency-at-half-rate run); absent = flat out. */
  rate?: number;
  /** `preload`: messages to send; `drain`: messages to receive and delete. */
  total?: number;
  /** `fifo-cycle`: message groups the producers pick from at random. */
  groups?: number;
  /** AMQP kinds: the queue's x-queue-type (RabbitMQ: classic by default, or quorum). */
  queueType?: 'classic' | 'quorum';
  /**
   * Several nodes: producers send to the first node only and consumers receive from the
   * others only, so every message crosses nodes (the wake-up latency run).
   */
  crossNodes?: boolean;
}

export interface LoadResult {
  /** Length of the measured window, from the child's own clock. */
  seconds: number;
  /** Completed requests (HTTP) or publishes (AMQP) in the window, sends and receives alike. */
  requests: number;
  /** Messages accepted by the server in the window. */
  sent: number;
  /** Messages received and deleted/acked in the window (cycle kinds). */
  consumed: number;
  /** ReceiveMessage calls completed in the window, and how many of them returned nothing. */
  receives: number;
  emptyReceives: number;
  /** Failed requests; any at all makes the figure suspect. */
  errors: number;
  firstError?: string;
  /** Client CPU over the window (user + system), in seconds. */
  clientCpuSeconds: number;
  /** Send→receive latency in ms, for messages received in the window (cycle kinds). */
  latency?: { p50: number; p99: number; count: number };
  /** `preload`/`drain`: whether `total` was reached before the window's limit. */
  complete?: boolean;
  /** Round trips to PostgreSQL in the window, when the load child itself talks to it (pg-boss). */
  roundTrips?: number;
}

/** Child → parent messages. `window-*` let the parent sample the server's CPU at the same moments. */
export type ChildMessage =
  | { type: 'window-start' }
  | { type: 'window-end' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };
