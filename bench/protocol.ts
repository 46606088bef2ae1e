/** What the orchestrator (run.ts) and a load child (load.ts) say to each other over IPC. */

export type LoadKind = 'send' | 'batch' | 'cycle' | 'cycle-batch' | 'rabbit-publish' | 'rabbit-cycle';

export interface LoadSpec {
  kind: LoadKind;
  /** Server base URL for HTTP kinds, amqp:// URL for RabbitMQ kinds. */
  target: string;
  /** SQS queue URL (HTTP kinds) or queue name (RabbitMQ kinds). */
  queue: string;
  /** Concurrent senders: HTTP connections / publishers. */
  producers: number;
  /** Concurrent receivers (cycle kinds only). */
  consumers: number;
  bodyBytes: number;
  warmupSeconds: number;
  seconds: number;
  /** Caps the total send rate in messages/s (the latency-at-half-rate run); absent = flat out. */
  rate?: number;
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
  /** Failed requests; any at all makes the figure suspect. */
  errors: number;
  firstError?: string;
  /** Client CPU over the window (user + system), in seconds. */
  clientCpuSeconds: number;
  /** Send→receive latency in ms, for messages received in the window (cycle kinds). */
  latency?: { p50: number; p99: number; count: number };
}

/** Child → parent messages. `window-*` let the parent sample the server's CPU at the same moments. */
export type ChildMessage =
  | { type: 'window-start' }
  | { type: 'window-end' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };
