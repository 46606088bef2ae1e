import { Counter, Gauge, type Registry } from 'prom-client';
import type { MoveTaskRecord } from '../engine/store/move-tasks.js';
import type { QueueLabels } from './queue-labels.js';

const LABELS = ['queue_name', 'account_id', 'region', 'node'] as const;

/**
 * Move tasks (redrives) as the node that drives them sees them, labelled by source queue.
 * A source has at most one active task, so its labels name the task: the gauges hold the
 * latest task of each source with its status, moved and total counts; the counters add
 * up messages moved and tasks that ended, by status (an alert watches `FAILED`).
 */
export class MoveTaskGauges {
  private readonly latest = new Map<string, Record<string, string>>();
  private readonly m;

  constructor(
    registry: Registry,
    private readonly node: string,
  ) {
    const registers = [registry];
    this.m = {
      movedTotal: new Counter({
        name: 'redrive_move_task_messages_moved_total',
        help: 'Messages moved out of queue_name by move tasks (redrives) this node drove.',
        labelNames: LABELS,
        registers,
      }),
      finished: new Counter({
        name: 'redrive_move_tasks_finished_total',
        help: 'Move tasks that ended on this node, by final status (COMPLETED, CANCELLED, FAILED).',
        labelNames: [...LABELS, 'status'],
        registers,
      }),
      moved: new Gauge({
        name: 'redrive_move_task_moved_messages',
        help: 'Messages moved so far by the latest move task of queue_name that this node drove, with its status.',
        labelNames: [...LABELS, 'status'],
        registers,
      }),
      toMove: new Gauge({
        name: 'redrive_move_task_messages_to_move',
        help: 'Messages the latest move task of queue_name set out to move, with its status.',
        labelNames: [...LABELS, 'status'],
        registers,
      }),
    };
  }

  update(task: MoveTaskRecord, movedNow: number, source: QueueLabels): void {
    const base = { ...source, node: this.node };
    if (movedNow > 0) this.m.movedTotal.inc(base, movedNow);
    if (task.status !== 'RUNNING') this.m.finished.inc({ ...base, status: task.status });
    const key = `${source.account_id}/${source.region}/${source.queue_name}`;
    const previous = this.latest.get(key);
    const labels = { ...base, status: task.status };
    if (previous && previous.status !== task.status) {
      this.m.moved.remove(previous);
      this.m.toMove.remove(previous);
    }
    this.latest.set(key, labels);
    this.m.moved.set(labels, task.moved);
    this.m.toMove.set(labels, task.toMove);
  }
}
