import { queueArn } from '../engine/kernel/addressing.js';
import { actions } from '../engine/actions/registry.js';
import type { Engine } from '../engine/engine.js';
import type { RequestContext } from '../engine/kernel/types.js';
import { ConfigError, type QueueDeclaration } from './config-file.js';

/**
 * Creates the queues the config file declares, idempotently: a queue that exists is
 * kept, with its messages, and given the declared attributes and tags, so a restart
 * with an edited file applies the edit. Every queue is created before any attribute is
 * set, so dead-letter wiring may name a queue declared further down; queues with
 * dead-letter wiring get their attributes last, after their targets' RedriveAllowPolicy.
 * Each declaration goes through the same actions as a client's, with the same checks.
 */
export async function declareQueues(engine: Engine, decls: QueueDeclaration[], defaultAccount: string): Promise<void> {
  const ctxOf = (d: QueueDeclaration): RequestContext => ({
    accountId: d.accountId ?? defaultAccount,
    region: engine.region,
    baseUrl: 'http://config',
    requestId: 'config',
  });
  const step = async (d: QueueDeclaration, i: number, what: () => Promise<unknown>) => {
    try {
      await what();
    } catch (e) {
      throw new ConfigError(`queues[${i}] (${d.name}): ${(e as Error).message}`, { cause: e });
    }
  };
  const urlOf = (d: QueueDeclaration) => `http://config/${d.accountId ?? defaultAccount}/${d.name}`;
  for (const [i, d] of decls.entries()) {
    const fifo = d.name.endsWith('.fifo') ? { FifoQueue: 'true' } : undefined;
    await step(d, i, () => actions.CreateQueue!(engine, ctxOf(d), { QueueName: d.name, Attributes: fifo }));
  }
  const wired = (d: QueueDeclaration) => d.deadLetterQueue !== undefined || d.attributes.RedrivePolicy !== undefined;
  const ordered = [...decls.entries()].sort(([, a], [, b]) => Number(wired(a)) - Number(wired(b)));
  for (const [i, d] of ordered) {
    const attributes = { ...d.attributes };
    delete attributes.FifoQueue;
    if (d.deadLetterQueue) {
      const target = queueArn(engine.region, d.accountId ?? defaultAccount, d.deadLetterQueue.name);
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: target,
        maxReceiveCount: d.deadLetterQueue.maxReceiveCount,
      });
    }
    if (Object.keys(attributes).length) {
      await step(d, i, () =>
        actions.SetQueueAttributes!(engine, ctxOf(d), { QueueUrl: urlOf(d), Attributes: attributes }),
      );
    }
    if (Object.keys(d.tags).length)
      await step(d, i, () => actions.TagQueue!(engine, ctxOf(d), { QueueUrl: urlOf(d), Tags: d.tags }));
  }
}
