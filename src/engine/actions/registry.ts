import type { ActionEngine } from './action-engine.js';
import { SqsError } from '../kernel/errors.js';
import * as permissions from './permission-actions.js';
import type { Cancellation } from '../messages/long-poll.js';
import * as deadLetters from './dead-letter-actions.js';
import { getDeadLetterBreakdown } from './dead-letter-breakdown-actions.js';
import { changeMessageVisibilityById, deleteMessagesById, moveMessagesById } from './message-by-id-actions.js';
import { getQueueActivity } from './queue-activity-actions.js';
import { releaseAmqpDeliveries } from './amqp-delivery-actions.js';
import { listQueueSummaries } from './queue-summary-actions.js';
import * as messages from './message-actions.js';
import { sendMessage, sendMessageBatch } from './send-message-actions.js';
import * as moveTasks from './move-task-actions.js';
import * as queues from './queue-actions.js';
import type { RequestContext } from '../kernel/types.js';
import type { ActionInputs, ActionName } from './action-inputs.js';

/** A request's members as a protocol adapter decoded them, before the action checks them. */
export type ActionInput = Record<string, unknown>;
export type ActionHandler<Input = ActionInput> = (
  engine: ActionEngine,
  ctx: RequestContext,
  input: Input,
  signal?: Cancellation,
) => Promise<Record<string, unknown>>;

/**
 * Every action of the models (src/protocols/query/sqs-query-model.json and
 * redrive-extensions.json, through the generated action-inputs.ts), each with the
 * members its model gives it: an action the models lack, or one they have and this
 * table does not, fails to compile.
 */
const handlers = {
  AddPermission: permissions.addPermission,
  RemovePermission: permissions.removePermission,
  CreateQueue: queues.createQueue,
  GetQueueUrl: queues.getQueueUrl,
  ListQueues: queues.listQueues,
  DeleteQueue: queues.deleteQueue,
  PurgeQueue: queues.purgeQueue,
  GetQueueAttributes: queues.getQueueAttributes,
  SetQueueAttributes: queues.setQueueAttributes,
  TagQueue: queues.tagQueue,
  UntagQueue: queues.untagQueue,
  ListQueueTags: queues.listQueueTags,
  SendMessage: sendMessage,
  SendMessageBatch: sendMessageBatch,
  ReceiveMessage: messages.receiveMessage,
  DeleteMessage: messages.deleteMessage,
  DeleteMessageBatch: messages.deleteMessageBatch,
  ChangeMessageVisibility: messages.changeMessageVisibility,
  ChangeMessageVisibilityBatch: messages.changeMessageVisibilityBatch,
  ListDeadLetterSourceQueues: deadLetters.listDeadLetterSourceQueues,
  StartMessageMoveTask: moveTasks.startMessageMoveTask,
  ListMessageMoveTasks: moveTasks.listMessageMoveTasks,
  CancelMessageMoveTask: moveTasks.cancelMessageMoveTask,
  // Redrive extension (not an SQS action): browse messages without receiving them.
  PeekMessages: deadLetters.peekMessages,
  // Redrive extension: dead-letter a received message now, with reason `rejected`.
  RejectMessage: deadLetters.rejectMessage,
  // Redrive extensions for the console and the CLI (docs/extensions.md).
  ListQueueSummaries: listQueueSummaries,
  DeleteMessagesById: deleteMessagesById,
  ChangeMessageVisibilityById: changeMessageVisibilityById,
  MoveMessagesById: moveMessagesById,
  GetDeadLetterBreakdown: getDeadLetterBreakdown,
  GetQueueActivity: getQueueActivity,
  // Redrive extension: return a stopped process's unacknowledged AMQP deliveries now.
  ReleaseAmqpDeliveries: releaseAmqpDeliveries,
} satisfies { [A in ActionName]: ActionHandler<ActionInputs[A]> };

/**
 * Every action Redrive serves, by its API name. Both protocol adapters dispatch here, with
 * the members the client sent, which each action checks (its errors are the API's).
 */
export const actions = handlers as unknown as Record<string, ActionHandler>;

export function hasAction(name: string): boolean {
  return Object.hasOwn(actions, name);
}

/**
 * Runs an action for a protocol adapter (which has checked `hasAction`), and tells the
 * observer how it went. A plain function with one reaction rather than an async one: every
 * request passes here, and an async frame is a promise and a saved frame more.
 */
export function dispatch(
  engine: ActionEngine,
  ctx: RequestContext,
  action: string,
  input: ActionInput,
  signal?: Cancellation,
): Promise<Record<string, unknown>> {
  ctx.action = action;
  ctx.input = input;
  const start = performance.now();
  const served = (code: string) =>
    engine.observer.request(action, ctx.protocol ?? 'json', code, (performance.now() - start) / 1000);
  let running: Promise<Record<string, unknown>>;
  try {
    running = actions[action]!(engine, ctx, input, signal);
  } catch (e) {
    served(errorCode(e));
    return Promise.reject(e);
  }
  return running.then(
    (output) => {
      served('');
      return output;
    },
    (e: unknown) => {
      served(errorCode(e));
      throw e;
    },
  );
}

const errorCode = (e: unknown) => (e instanceof SqsError ? e.code : 'InternalFailure');
