import type { Clock } from '../kernel/clock.js';
import type { DeadLetterSettings } from '../policies/dead-letter-settings.js';
import type { EngineObserver } from './observer.js';
import type { Store } from '../store/store.js';
import type { DeadLettered } from '../store/dead-letters.js';
import type { QueueRecord } from '../kernel/types.js';

export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * What the engine's helpers (dead letters, redrive policies, permissions, move tasks)
 * need of it. They take this rather than the Engine class, which wires them together
 * and imports them, so no helper imports engine.ts.
 */
export interface EngineContext {
  readonly store: Store;
  readonly clock: Clock;
  /** The server's default region (`--region`): AMQP's queues and the config file's live there. */
  readonly region: string;
  readonly log: Log;
  readonly observer: EngineObserver;
  /** The activity counts not yet in the store: flushed before they are read (activity-counts.ts). */
  readonly activity: { flush(): Promise<void> };
  /** The queue's dead-letter settings in force: its attributes over the matching policy. */
  settingsOf(queue: Omit<QueueRecord, 'id'>): DeadLetterSettings;
  arnOf(queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): string;
  /** Reports what an operation on `queue` dead-lettered, once it has committed (dead-letters/report.ts). */
  deadLettered(queue: QueueRecord, outcomes: DeadLettered[]): void;
}
