/** The death history and cycle rule (deaths.ts), and policy resolution (policies.ts, dead-letter-settings.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { effectiveSettings } from '../../src/engine/policies/dead-letter-settings.js';
import {
  closesCycle,
  firstDeath,
  lastDeath,
  recordDeath,
  type DeathEvent,
} from '../../src/engine/dead-letters/deaths.js';
import { parsePolicies, ServerPolicySet } from '../../src/engine/policies/server-policies.js';
import type { Death, QueueRecord } from '../../src/engine/kernel/types.js';

const ev = (queue: string, reason: DeathEvent['reason'], time: number, rejectReason?: string): DeathEvent => ({
  queue,
  queueArn: `arn:${queue}`,
  reason,
  time,
  rejectReason,
});
const replay = (events: DeathEvent[]) => events.reduce<Death[] | undefined>((h, e) => recordDeath(h, e), undefined)!;
const brief = (h: Death[]) => h.map((d) => `${d.queue}/${d.reason}/${d.count}`);

test('entries compress by {queue, reason}; a repeated one counts and moves to the front', () => {
  const h = replay([
    ev('a', 'rejected', 1, 'x'),
    ev('b', 'expired', 2),
    ev('a', 'rejected', 3, 'y'),
    ev('a', 'maxlen', 4),
  ]);
  assert.deepEqual(brief(h), ['a/maxlen/1', 'a/rejected/2', 'b/expired/1']);
  assert.deepEqual([h[1]!.firstTime, h[1]!.lastTime, h[1]!.rejectReason], [1, 3, 'y']);
});

test('the first death is the earliest entry, even after it moved to the front; the last is the front one', () => {
  const h = replay([ev('a', 'rejected', 1), ev('b', 'rejected', 2), ev('a', 'rejected', 3)]);
  assert.deepEqual(brief(h), ['a/rejected/2', 'b/rejected/1']);
  assert.deepEqual(firstDeath(h), { queue: 'a', queueArn: 'arn:a', reason: 'rejected', time: 1 });
  assert.deepEqual(lastDeath(h), { queue: 'a', queueArn: 'arn:a', reason: 'rejected', time: 3 });
  assert.equal(firstDeath([]), undefined);
});

test('a cycle is closed when the target is reached before any rejection', () => {
  assert.equal(closesCycle(replay([ev('a', 'expired', 1), ev('b', 'expired', 2)]), 'arn:a'), true);
  assert.equal(closesCycle(replay([ev('a', 'rejected', 1), ev('b', 'expired', 2)]), 'arn:a'), false, 'rejected in a');
  assert.equal(
    closesCycle(replay([ev('a', 'expired', 1), ev('b', 'rejected', 2)]), 'arn:a'),
    false,
    'the newest death is a rejection',
  );
  assert.equal(closesCycle(replay([ev('a', 'expired', 1), ev('b', 'expired', 2)]), 'arn:c'), false, 'never died in c');
});

const queue = (name: string, attributes: Record<string, string> = {}): QueueRecord => ({
  id: 1,
  accountId: '000000000000',
  region: 'us-east-1',
  name,
  fifo: false,
  attributes,
  tags: {},
  createdAt: 0,
  modifiedAt: 0,
  lastPurgeAt: null,
});

test('the highest-priority matching policy applies; queue attributes win setting by setting', () => {
  const set = new ServerPolicySet(
    parsePolicies([
      { name: 'low', pattern: '.*', definition: { maxLength: 1 } },
      {
        name: 'high',
        pattern: '^orders',
        priority: 5,
        definition: { deadLetterTargetName: 'dlq', maxReceiveCount: 4, maxLength: 10, overflow: 'reject-publish' },
      },
    ]),
  );
  const plain = effectiveSettings(set, 'us-east-1', queue('orders-1'));
  assert.equal(plain.targetArn, 'arn:aws:sqs:us-east-1:000000000000:dlq');
  assert.deepEqual(
    [plain.maxReceiveCount, plain.maxLength, plain.overflow, plain.policy?.name],
    [4, 10, 'reject-publish', 'high'],
  );
  const own = effectiveSettings(
    set,
    'us-east-1',
    queue('orders-2', {
      RedriveMaxLength: '7',
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:mine',
        maxReceiveCount: 2,
      }),
    }),
  );
  assert.deepEqual(
    [own.targetArn?.split(':').pop(), own.maxReceiveCount, own.maxLength, own.overflow],
    ['mine', 2, 7, 'reject-publish'],
  );
  assert.deepEqual(own.policy?.applied, { overflow: 'reject-publish' });
  const other = effectiveSettings(set, 'us-east-1', queue('billing'));
  assert.deepEqual(
    [other.targetArn, other.maxLength, other.overflow, other.policy?.name],
    [undefined, 1, 'drop-head', 'low'],
  );
});

test('policies are validated with the path of the offending field', () => {
  assert.throws(
    () => parsePolicies([{ name: 'p', pattern: 'x', definition: { maxLength: -1 } }]),
    /policies\[0\]\.definition\.maxLength: must be an integer from 0/,
  );
  assert.throws(
    () => parsePolicies([{ name: 'p', pattern: 'x', definition: { nope: 1 } }]),
    /policies\[0\]\.definition\.nope: unknown setting/,
  );
  assert.throws(
    () =>
      parsePolicies([
        { name: 'p', pattern: 'x', definition: {} },
        { name: 'p', pattern: 'y', definition: {} },
      ]),
    /duplicate policy name/,
  );
});
