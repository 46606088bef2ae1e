/**
 * The message system attributes Redrive reserves for restoring what an export carries:
 * a send may give them, as PeekMessages shows them, and the queue validation accepts
 * their names (queues/validation.ts) while the dead-letter import reads them
 * (dead-letters/restored-deaths.ts).
 */

/** An AMQP message's envelope (routing/envelope.ts, amqp/message-view.ts). */
export const AMQP_ATTRIBUTE = 'RedriveAmqp';
/** A dead-lettered message's history of deaths, oldest first. */
export const DEATH_HISTORY_ATTRIBUTE = 'RedriveDeathHistory';
/** The ARN of the queue a dead-lettered message came from. */
export const SOURCE_ARN_ATTRIBUTE = 'DeadLetterQueueSourceArn';
/** What restores a dead letter's history (dead-letters/restored-deaths.ts). */
export const RESTORE_ATTRIBUTES: readonly string[] = [DEATH_HISTORY_ATTRIBUTE, SOURCE_ARN_ATTRIBUTE];
