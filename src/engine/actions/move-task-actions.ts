import { randomUUID } from 'node:crypto';
import type { MoveTaskRecord } from '../store/store.js';
import { parseQueueArn } from '../kernel/addressing.js';
import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors, sqsError } from '../kernel/errors.js';
import { parseMoveFilter, type MoveFilter } from '../move-tasks/move-filter.js';
import { scanQueue, type ScanBudget } from '../messages/bounded-scan.js';
import { moveRules } from '../move-tasks/move-task-runner.js';
import { cyclesQueueName } from '../dead-letters/dead-letter-queue.js';
import { deadLetterSources } from '../dead-letters/redrive-policy.js';
import type { QueueRecord, RequestContext } from '../kernel/types.js';
import { intParam, requireString } from '../queues/validation.js';

const notFound = (parameter: string) =>
  sqsError(
    'ResourceNotFoundException',
    `The resource that you specified for the ${parameter} parameter doesn't exist.`,
  );

/**
 * The caller's queue named by an ARN, if it exists in the caller's region: as in SQS, a
 * move task's source and destination are in the account and region of the request.
 */
export async function queueByArn(
  engine: ActionEngine,
  ctx: RequestContext,
  arn: string,
): Promise<QueueRecord | undefined> {
  const a = parseQueueArn(arn);
  if (!a || a.region !== ctx.region || a.accountId !== ctx.accountId) return undefined;
  return engine.store.queues.get(a);
}

/** As SQS makes it: base64 of `{"taskId":"<uuid>","sourceArn":"<arn>"}`. */
export function encodeTaskHandle(taskId: string, sourceArn: string): string {
  return Buffer.from(JSON.stringify({ taskId, sourceArn })).toString('base64');
}

export function decodeTaskHandle(handle: string): { taskId: string; sourceArn: string } {
  try {
    const v = JSON.parse(Buffer.from(handle, 'base64').toString('utf8')) as Record<string, unknown>;
    if (typeof v.taskId === 'string' && typeof v.sourceArn === 'string')
      return { taskId: v.taskId, sourceArn: v.sourceArn };
  } catch {
    // falls through to SQS's error
  }
  throw errors.invalidParameterValue('Value for parameter TaskHandle is invalid.');
}

/**
 * StartMessageMoveTask, plus two Redrive extensions that SQS clients never send:
 * `Filter` (selective redrive, see move-filter.ts) and `DryRun: true`, which starts
 * nothing and answers `ApproximateNumberOfMessagesToMove` with how many would move now.
 */
export async function startMessageMoveTask(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['StartMessageMoveTask'],
) {
  const sourceArn = requireString(input.SourceArn, 'SourceArn');
  const source = await queueByArn(engine, ctx, sourceArn);
  if (!source) throw notFound('SourceArn');
  // The cycles queue is a dead-letter queue of any queue whose cycle was broken.
  if (source.name !== cyclesQueueName(source.fifo) && (await deadLetterSources(engine, source)).length === 0) {
    throw errors.invalidParameterValue('Source queue must be configured as a Dead Letter Queue.');
  }
  let destinationArn: string | undefined;
  if (input.DestinationArn !== undefined && input.DestinationArn !== null) {
    destinationArn = requireString(input.DestinationArn, 'DestinationArn');
    const destination = await queueByArn(engine, ctx, destinationArn);
    if (!destination) throw notFound('DestinationArn');
    if (destination.fifo !== source.fifo) {
      throw errors.invalidParameterValue('The destination queue must be of the same type as the source queue.');
    }
    if (destination.id === source.id)
      throw errors.invalidParameterValue('The destination queue must not be the source queue.');
  }
  const rate = intParam(input.MaxNumberOfMessagesPerSecond, 'MaxNumberOfMessagesPerSecond', 1, 500);
  const filter = parseMoveFilter(input.Filter);
  // A selective redrive expects to move the matching messages, not the whole queue.
  const counted =
    filter || input.DryRun === true ? await countMatching(engine, source, destinationArn, filter) : undefined;
  const toMove = counted?.count;
  if (input.DryRun === true) {
    // Extension: the count stopped at COUNT_SCAN, so at least this many would move.
    return counted!.complete
      ? { ApproximateNumberOfMessagesToMove: toMove }
      : { ApproximateNumberOfMessagesToMove: toMove, ApproximateNumberOfMessagesToMoveIsLowerBound: true };
  }
  const task = await engine.store.moveTasks.create(
    {
      id: randomUUID(),
      accountId: ctx.accountId,
      sourceQueueId: source.id,
      sourceArn,
      destinationArn,
      maxPerSecond: rate,
      filter: filter && JSON.stringify(filter),
      startedAt: engine.clock.now(),
      toMove,
    },
    engine.quotas.moveTasks,
  );
  if (task === 'sourceBusy') {
    throw errors.invalidParameterValue(
      'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
    );
  }
  if (task === 'accountLimit') {
    throw sqsError(
      'OverLimit',
      `There are already ${engine.quotas.moveTasks} active message movement tasks in this account.`,
    );
  }
  engine.log.info(
    {
      task: task.id,
      account: ctx.accountId,
      source: sourceArn,
      destination: destinationArn,
      maxPerSecond: rate,
      filter,
      toMove,
    },
    'move task started',
  );
  engine.moveTasks.wake();
  return { TaskHandle: encodeTaskHandle(task.id, sourceArn) };
}

/**
 * What counting the messages a task would move examines at most per request (DryRun, or
 * a filtered start's ApproximateNumberOfMessagesToMove): 100,000 messages and 16 MiB of
 * bodies, 25 at a time, with the event loop given back between reads and every 1 MiB of bodies. Past it, the count
 * is of the messages examined: at least that many would move.
 */
export const COUNT_SCAN: ScanBudget = { messages: 100_000, bytes: 16 * 1024 * 1024, page: 25 };

async function countMatching(
  engine: ActionEngine,
  source: QueueRecord,
  destinationArn: string | undefined,
  filter: MoveFilter | undefined,
): Promise<{ count: number; complete: boolean }> {
  const rules = moveRules(source, { destinationArn, filter });
  const now = engine.clock.now();
  let count = 0;
  const { stoppedBy } = await scanQueue(engine.store, source.id, 0, COUNT_SCAN, (m) => {
    if (rules.matches(m, now)) count++;
    return true;
  });
  return { count, complete: stoppedBy === 'end' };
}

export async function listMessageMoveTasks(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ListMessageMoveTasks'],
) {
  const sourceArn = requireString(input.SourceArn, 'SourceArn');
  const source = await queueByArn(engine, ctx, sourceArn);
  if (!source) throw notFound('SourceArn');
  const max = intParam(input.MaxResults, 'MaxResults', 1, 10) ?? 1;
  const tasks = await engine.store.moveTasks.list(source.id, max);
  return tasks.length ? { Results: tasks.map(resultEntry) } : {};
}

/** A task as ListMessageMoveTasks shows it: optional fields only when they apply. */
function resultEntry(t: MoveTaskRecord) {
  const out: Record<string, unknown> = {};
  if (t.status === 'RUNNING') out.TaskHandle = encodeTaskHandle(t.id, t.sourceArn);
  out.Status = t.status;
  out.SourceArn = t.sourceArn;
  if (t.destinationArn !== undefined) out.DestinationArn = t.destinationArn;
  if (t.maxPerSecond !== undefined) out.MaxNumberOfMessagesPerSecond = t.maxPerSecond;
  out.ApproximateNumberOfMessagesMoved = t.moved;
  out.ApproximateNumberOfMessagesToMove = t.toMove;
  if (t.status === 'FAILED' && t.failureReason) out.FailureReason = t.failureReason;
  out.StartedTimestamp = t.startedAt;
  // Extension: the selective-redrive filter the task applies.
  if (t.filter) out.Filter = JSON.parse(t.filter);
  return out;
}

export async function cancelMessageMoveTask(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['CancelMessageMoveTask'],
) {
  const { taskId, sourceArn } = decodeTaskHandle(requireString(input.TaskHandle, 'TaskHandle'));
  const source = await queueByArn(engine, ctx, sourceArn);
  if (!source) throw notFound('SourceArn');
  const task = await engine.store.moveTasks.get(taskId);
  if (!task || task.sourceQueueId !== source.id) throw sqsError('ResourceNotFoundException', 'Task does not exist.');
  // The store cancels only a RUNNING task, so a task finishing meanwhile is not cancelled.
  const after = task.status === 'RUNNING' ? await engine.store.moveTasks.cancel(taskId) : undefined;
  if (after?.status !== 'CANCELLED') {
    throw errors.invalidParameterValue(
      `Only a task in RUNNING status can be cancelled; this task is ${after?.status ?? task.status}.`,
    );
  }
  engine.log.info(
    { task: taskId, account: ctx.accountId, source: sourceArn, moved: after.moved },
    'move task cancelled',
  );
  return { ApproximateNumberOfMessagesMoved: after.moved };
}
