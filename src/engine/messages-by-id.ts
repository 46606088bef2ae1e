import type { Engine } from './engine.js';
import type { RequestContext } from './types.js';
import { checkBatchEntries } from './validation.js';

/**
 * DeleteMessagesById (a Redrive extension): deletes up to 10 messages of a queue by
 * message id, with no receipt handle, for an operator clearing poison messages out of a
 * dead-letter queue (the console's "Delete selected"). Permission as DeleteMessage.
 *
 * A message is deleted whatever its state: visible, delayed, or in flight. An operator
 * who chose a message to delete means that message, and a DLQ consumer holding it would
 * otherwise get it again; that consumer's later DeleteMessage or ChangeMessageVisibility
 * then behaves as after another consumer's delete. The list is checked as SQS checks a
 * batch (EmptyBatchRequest, TooManyEntriesInBatchRequest, BatchEntryIdsNotDistinct,
 * InvalidBatchEntryId); an id the queue does not hold fails alone, with MessageNotFound.
 */
export async function deleteMessagesById(engine: Engine, ctx: RequestContext, input: Record<string, unknown>) {
  const queue = await engine.resolveQueue(ctx, input.QueueUrl);
  const raw = input.MessageIds;
  const ids = checkBatchEntries<{ Id: string }>(Array.isArray(raw) ? raw.map((Id: unknown) => ({ Id })) : raw, 'MessageId', 'MessageIds')
    .map((e) => e.Id);
  const deleted = new Set(await engine.store.messages.deleteByIds(queue.id, ids, engine.clock.now()));
  if (deleted.size) engine.observer.deleted(queue, deleted.size);
  return {
    Successful: ids.filter((id) => deleted.has(id)).map((Id) => ({ Id })),
    Failed: ids.filter((id) => !deleted.has(id)).map((Id) => ({
      Id, Code: 'MessageNotFound', Message: `No message with id ${Id} is in ${queue.name}.`, SenderFault: true,
    })),
  };
}
