import { amqpErrors } from '../../engine/kernel/amqp-errors.js';
import type { QueuedPublish } from './queued-publish.js';
import type { Settler } from './settler.js';
import type { Args, Method, MethodName } from './spec.js';
import { type HeldSettle, Transaction, type TransactionBudget } from './transaction.js';
import type { Unacked } from './unacked.js';

/** What the tx class methods need of their channel (channel.ts implements it). */
export interface TxChannel {
  tx?: Transaction;
  readonly publisher: { readonly confirming: boolean; store(batch: QueuedPublish[]): Promise<void> };
  readonly settler: Pick<Settler, 'apply'>;
  readonly unacked: Map<bigint, Unacked>;
  readonly host: { readonly transactions: TransactionBudget };
  send(name: MethodName, args?: Args): void;
}

/** tx.select, tx.commit and tx.rollback, with RabbitMQ's refusals. */
export async function handleTxMethod(ch: TxChannel, m: Method): Promise<void> {
  if (m.name === 'tx.select') {
    if (ch.publisher.confirming) throw amqpErrors.precondition('cannot switch from confirm to tx mode');
    ch.tx ??= new Transaction(ch.host.transactions);
    return ch.send('tx.select-ok');
  }
  if (!ch.tx) throw amqpErrors.precondition('channel is not transactional');
  if (m.name === 'tx.rollback') {
    rollback(ch);
    return ch.send('tx.rollback-ok');
  }
  await commit(ch, ch.tx);
}

/** tx.commit: the held publishes are stored, then the held settles applied, in order, as in RabbitMQ. */
async function commit(ch: TxChannel, tx: Transaction): Promise<void> {
  const { publishes, settles } = tx.take();
  try {
    if (publishes.length) await ch.publisher.store(publishes);
  } catch (e) {
    // The channel closes: the deliveries whose settles were held are requeued with the rest.
    restore(ch, settles);
    throw e;
  }
  for (const s of settles) await ch.settler.apply(s.picked, s.how);
  ch.send('tx.commit-ok');
}

/** tx.rollback (and a channel's close): the held publishes are dropped, the held settles undone. */
export function rollback(ch: TxChannel): void {
  if (ch.tx) restore(ch, ch.tx.take().settles);
}

/** Deliveries whose settles a transaction held go back on the unacknowledged list, in tag order. */
function restore(ch: TxChannel, settles: HeldSettle[]): void {
  const held = settles.flatMap((s) => s.picked);
  if (!held.length) return;
  const all = [...ch.unacked, ...held].sort(([a], [b]) => (a < b ? -1 : 1));
  ch.unacked.clear();
  for (const [tag, u] of all) ch.unacked.set(tag, u);
}
