import type { Log } from '../context/engine-context.js';
import type { EngineObserver } from '../context/observer.js';
import type { DeadLettered } from '../store/dead-letters.js';
import type { DeathReason, QueueRecord } from '../kernel/types.js';

/**
 * Logs and counts what an operation dead-lettered, once it has committed (stores may run
 * a transaction again, so nothing is logged from inside one). The observer hears of every
 * message: a move into a dead-letter queue is not a send there, it is a dead-letter arrival.
 */
export class DeadLetterReport {
  /** Cycles broken since start: messages parked in the cycles queue, AMQP copies not made. */
  cyclesBroken = 0;
  /** Messages dropped since start because they had no dead-letter queue to go to. */
  dropped = 0;
  /** Dead-letter exchange copies not made since start: their event's copy budget was spent. */
  copiesOverBudget = 0;

  constructor(
    private readonly observer: EngineObserver,
    private readonly log: Log,
  ) {}

  record(queue: QueueRecord, outcomes: DeadLettered[]): void {
    let drops: Map<string, string[]> | undefined;
    let overBudget: { count: number; messageIds: Set<string>; reason: DeathReason } | undefined;
    for (const d of outcomes) {
      if (d.kind === 'over-budget') {
        overBudget ??= { count: 0, messageIds: new Set(), reason: d.reason };
        overBudget.count++;
        overBudget.messageIds.add(d.messageId);
        continue;
      }
      if (d.kind === 'moved') {
        this.observer.deadLettered(queue, d.to!, d.reason);
      } else if (d.kind === 'cycle') {
        this.observer.cycleBroken(queue, d.reason, d.to);
        this.cyclesBroken++;
        this.log.warn(
          { queue: queue.name, messageId: d.messageId, reason: d.reason, cyclesBroken: this.cyclesBroken },
          d.to === undefined
            ? 'dead-letter cycle without a rejection: copy dropped, as RabbitMQ does (dead-letter exchange)'
            : 'dead-letter cycle without a rejection: message parked in the cycles queue',
        );
      } else {
        this.observer.dropped(queue, d.reason);
        this.dropped++;
        drops ??= new Map();
        const ids = drops.get(d.reason) ?? [];
        ids.push(d.messageId);
        drops.set(d.reason, ids);
      }
    }
    if (overBudget) {
      this.copiesOverBudget += overBudget.count;
      this.observer.copiesDropped?.(queue, overBudget.reason, overBudget.count);
      this.log.warn(
        {
          queue: queue.name,
          account: queue.accountId,
          reason: overBudget.reason,
          count: overBudget.count,
          messageIds: [...overBudget.messageIds].slice(0, 10),
          copiesOverBudget: this.copiesOverBudget,
        },
        'dead-letter copies not made: the copies one message may create through dead-letter exchanges were spent',
      );
    }
    // Dropping is the configured behaviour (a TTL or a length limit without a DLQ), so one
    // info line per operation and reason, not a warning per message.
    for (const [reason, ids] of drops ?? []) {
      this.log.info(
        {
          queue: queue.name,
          account: queue.accountId,
          reason,
          count: ids.length,
          messageIds: ids.slice(0, 10),
          dropped: this.dropped,
        },
        'messages dropped: the queue has no dead-letter queue',
      );
    }
  }
}
