import type { MoveFilter, MoveTask } from '../../wire/move-tasks.js';
import { call } from './api.js';

export type { MoveFilter, MoveTask };

/** StartMessageMoveTask with Redrive's Filter and DryRun, ListMessageMoveTasks and CancelMessageMoveTask. */
export interface MoveRequest {
  SourceArn: string;
  DestinationArn?: string;
  MaxNumberOfMessagesPerSecond?: number;
  Filter?: MoveFilter;
}

/** How many would move; `atLeast` when the server stopped counting at its bound (docs/security.md). */
export async function previewMove(req: MoveRequest): Promise<{ n: number; atLeast: boolean }> {
  const r = await call<{
    ApproximateNumberOfMessagesToMove: number;
    ApproximateNumberOfMessagesToMoveIsLowerBound?: boolean;
  }>('StartMessageMoveTask', { ...req, DryRun: true });
  return { n: r.ApproximateNumberOfMessagesToMove, atLeast: r.ApproximateNumberOfMessagesToMoveIsLowerBound === true };
}

export async function startMove(req: MoveRequest): Promise<string> {
  return (await call<{ TaskHandle: string }>('StartMessageMoveTask', { ...req })).TaskHandle;
}

export async function listMoves(sourceArn: string): Promise<MoveTask[]> {
  return (
    (await call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', { SourceArn: sourceArn, MaxResults: 10 })).Results ??
    []
  );
}

export async function cancelMove(handle: string): Promise<number> {
  return (await call<{ ApproximateNumberOfMessagesMoved: number }>('CancelMessageMoveTask', { TaskHandle: handle }))
    .ApproximateNumberOfMessagesMoved;
}
