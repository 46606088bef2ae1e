import type { ActivityCounter } from '../activity/activity-counts.js';
import type { AmqpEngine } from '../amqp/amqp-engine.js';
import type { AmqpPropertyCodec } from '../amqp/message-view.js';
import type { AccountQuotas } from '../queues/quotas.js';
import type { FairQueues } from '../messages/fair-queues.js';
import type { ReceiptCodec } from '../messages/receipt.js';
import type { MoveTaskRunner } from '../move-tasks/move-task-runner.js';

/**
 * What an action is handed: everything below it in the engine's layers, as the composer
 * (engine.ts) wires it. Actions take this, not the composer's class, so no action
 * imports the file that imports every action.
 */
export interface ActionEngine extends AmqpEngine {
  readonly activity: ActivityCounter;
  readonly fair: FairQueues;
  readonly moveTasks: MoveTaskRunner;
  readonly quotas: Required<AccountQuotas>;
  readonly inflightLimit: number;
  readonly maxLongPolls: number;
  readonly longPollsByAccount: Map<string, number>;
  readonly inflightEstimates: Map<number, number>;
  readonly amqpCodec?: AmqpPropertyCodec;
  receipts(): Promise<ReceiptCodec>;
}
