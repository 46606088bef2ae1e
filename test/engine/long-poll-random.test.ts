import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settle, testEngine } from './support.js';

/** A small seeded generator (mulberry32), so a failing run can be repeated with its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The long polls' wake-up rules (counted supply, attempts under way, a drained queue
 * sparing a new poll's receive) in random interleavings of sends, delayed sends, long
 * polls of every size, deletes, abandoned receipts and time: whenever everything has
 * settled, no long poll waits while its queue has a visible message, and in the end every
 * message was received.
 */
for (const seed of [1, 2, 3, 4, 5, 6]) {
  test(`no long poll waits while a message is visible (seed ${seed})`, async () => {
    const rnd = random(seed);
    const pick = (n: number) => Math.floor(rnd() * n);
    const t = testEngine();
    try {
      const { QueueUrl } = await t.call('CreateQueue', {
        QueueName: `random-${seed}`,
        Attributes: { VisibilityTimeout: '5' },
      });
      const sent = new Set<string>();
      const deleted = new Set<string>();
      const polls: Promise<void>[] = [];
      const poll = (max: number) =>
        t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: max }).then(async (r) => {
          for (const m of r.Messages ?? []) {
            // Some receipts are abandoned: the message comes back after its visibility timeout.
            if (rnd() < 0.2) continue;
            await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: m.ReceiptHandle });
            deleted.add(m.MessageId);
          }
        });
      const visible = async () =>
        Number(
          (await t.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] })).Attributes
            .ApproximateNumberOfMessages,
        );

      for (let step = 0; step < 150; step++) {
        const action = rnd();
        if (action < 0.35) {
          const n = 1 + pick(10);
          const delay = rnd() < 0.15 ? 1 + pick(3) : 0;
          const r = await t.call('SendMessageBatch', {
            QueueUrl,
            Entries: Array.from({ length: n }, (_, i) => ({
              Id: `m${i}`,
              MessageBody: `s${step}-${i}`,
              DelaySeconds: delay,
            })),
          });
          for (const ok of r.Successful) sent.add(ok.MessageId);
        } else if (action < 0.75) {
          polls.push(poll(1 + pick(10)));
        } else {
          t.clock.advance(pick(3000));
        }
        await settle(30);
        if (t.engine.longPolls.size > 0)
          assert.equal(await visible(), 0, `step ${step}: a long poll waits while messages are visible`);
      }
      // Drain: time passes until every message was received and deleted.
      for (let round = 0; round < 40 && deleted.size < sent.size; round++) {
        polls.push(poll(10));
        await settle(30);
        t.clock.advance(6000);
        await settle(30);
      }
      assert.equal(deleted.size, sent.size, 'every message received and deleted');
      t.engine.longPolls.releaseAll();
      await Promise.all(polls);
    } finally {
      await t.close();
    }
  });
}
