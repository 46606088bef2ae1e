import { performance } from 'node:perf_hooks';
import type { LoadResult } from './protocol.js';
import { percentile } from './stats.js';

/**
 * The timing of one load run, inside the load child: an unmeasured warm-up, then the
 * measured window, then done. Workload loops check `running` and stop by themselves;
 * counters only count what completes inside the window.
 */
export class Window {
  private phase: 'warmup' | 'measure' | 'done' = 'warmup';
  private requests = 0;
  private sent = 0;
  private consumed = 0;
  private errors = 0;
  private receives = 0;
  private emptyReceives = 0;
  private firstError?: string;
  private readonly latencies: number[] = [];
  private startedAt = 0;
  private endedAt = 0;
  private cpuAtStart?: NodeJS.CpuUsage;
  private cpuUsed?: NodeJS.CpuUsage;
  /** Resolves when the window closes. */
  readonly closed: Promise<void>;
  /** Resolves when the measured window opens (after the warm-up). */
  readonly opened: Promise<void>;
  private open?: () => void;

  /** Set by a fixed-amount workload (preload, drain) that did all its work in time. */
  complete?: boolean;
  /** Round trips to PostgreSQL in the window, set by a workload that counts them (pg-boss). */
  roundTrips?: number;
  private timer?: NodeJS.Timeout;
  private close?: () => void;

  constructor(warmupSeconds: number, seconds: number, notify: (event: 'window-start' | 'window-end') => void) {
    this.opened = new Promise((resolve) => (this.open = resolve));
    this.closed = new Promise((resolve) => {
      this.close = () => {
        if (this.phase === 'done') return;
        clearTimeout(this.timer);
        this.phase = 'done';
        this.endedAt = performance.now();
        this.cpuUsed = process.cpuUsage(this.cpuAtStart);
        notify('window-end');
        resolve();
      };
      this.timer = setTimeout(() => {
        this.phase = 'measure';
        this.cpuAtStart = process.cpuUsage();
        this.startedAt = performance.now();
        notify('window-start');
        this.open!();
        this.timer = setTimeout(() => this.close!(), seconds * 1000);
      }, warmupSeconds * 1000);
    });
  }

  /**
   * Closes the window now: a workload with a fixed amount of work (preload, drain) ends
   * when the work is done, and `seconds` is only its limit.
   */
  stop(): void {
    if (this.phase === 'measure') this.close!();
  }

  /** Messages consumed so far in the window. */
  get consumedSoFar(): number {
    return this.consumed;
  }

  get running(): boolean {
    return this.phase !== 'done';
  }

  /** One completed request that carried `sent` messages in and `consumed` out. */
  count(sent: number, consumed = 0): void {
    if (this.phase !== 'measure') return;
    this.requests++;
    this.sent += sent;
    this.consumed += consumed;
  }

  /**
   * What an outside load generator (wrk) did in the window, counted as it reports it after
   * the window: its requests, its errors, its latency percentiles and its CPU.
   */
  external(r: { requests: number; errors: number; p50: number; p99: number; cpuSeconds: number }): void {
    this.requests += r.requests;
    this.sent += r.requests - r.errors;
    this.errors += r.errors;
    this.externalLatency = { p50: r.p50, p99: r.p99, count: r.requests };
    this.externalCpu = r.cpuSeconds;
    if (r.errors) this.firstError ??= `${r.errors} answers were not 2xx`;
  }

  private externalLatency?: { p50: number; p99: number; count: number };
  private externalCpu = 0;

  /** One completed ReceiveMessage that returned `n` messages (the count of empty ones shows wasted polls). */
  received(n: number): void {
    if (this.phase !== 'measure') return;
    this.receives++;
    if (n === 0) this.emptyReceives++;
  }

  latency(ms: number): void {
    if (this.phase === 'measure') this.latencies.push(ms);
  }

  /** Errors count in every phase: a failure during warm-up still means something is wrong. */
  error(e: unknown): void {
    this.errors++;
    this.firstError ??= e instanceof Error ? e.message : String(e);
  }

  result(): LoadResult {
    const cpu = this.cpuUsed ?? { user: 0, system: 0 };
    return {
      seconds: (this.endedAt - this.startedAt) / 1000,
      requests: this.requests,
      sent: this.sent,
      consumed: this.consumed,
      errors: this.errors,
      receives: this.receives,
      emptyReceives: this.emptyReceives,
      firstError: this.firstError,
      clientCpuSeconds: (cpu.user + cpu.system) / 1e6 + this.externalCpu,
      latency:
        this.externalLatency ??
        (this.latencies.length
          ? { p50: percentile(this.latencies, 50), p99: percentile(this.latencies, 99), count: this.latencies.length }
          : undefined),
      complete: this.complete,
      roundTrips: this.roundTrips,
    };
  }
}

/**
 * Spaces one sender's messages evenly to reach its share of a target rate. After a
 * stall it does not burst to catch up, so the offered load stays close to the target.
 */
export class Pacer {
  private next = performance.now();

  constructor(private readonly intervalMs: number) {}

  async wait(): Promise<void> {
    const now = performance.now();
    this.next = Math.max(this.next + this.intervalMs, now - this.intervalMs);
    const delay = this.next - now;
    if (delay > 1) await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** A body of exactly `bytes` ASCII bytes that starts with the time it was made. */
export function stampedBody(bytes: number): string {
  return `${performance.now().toFixed(3)} `.padEnd(bytes, 'x');
}

/** The send time stampedBody put at the start of a body. */
export function stampOf(body: string): number {
  return parseFloat(body);
}
