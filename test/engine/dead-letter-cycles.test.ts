/**
 * Dead-letter cycles at the engine: the cycles queue exists only once a cycle has been
 * broken, and a cycle broken in a transaction that the store runs again (the SQLite
 * group commit re-runs a batch after one of its jobs fails) is logged and counted once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { deadLetterTarget } from '../../src/engine/dead-letters/road.js';
import { Engine } from '../../src/engine/engine.js';
import type { QueueRecord } from '../../src/engine/kernel/types.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx } from './support.js';

const clock = new ManualClock(1_700_000_000_000);
const warnings: { obj: object; msg?: string }[] = [];
const engine = new Engine({
  store: new SqliteStore({ path: ':memory:' }),
  clock,
  region: 'us-east-1',
  log: { info() {}, error() {}, warn: (obj, msg) => void warnings.push({ obj, msg }) },
});
const call = (action: string, input: Record<string, unknown>) =>
  actions[action]!(engine, ctx, input) as Promise<Record<string, any>>;
const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
const redrivePolicy = (name: string) => JSON.stringify({ deadLetterTargetArn: arn(name), maxReceiveCount: 1 });
const queue = async (name: string) =>
  (await engine.store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: name })) as QueueRecord;

before(async () => {
  // a and b each dead-letter into the other and expire their messages after 1 s.
  await call('CreateQueue', { QueueName: 'a', Attributes: { RedriveMessageTtlSeconds: '1' } });
  await call('CreateQueue', {
    QueueName: 'b',
    Attributes: { RedriveMessageTtlSeconds: '1', RedrivePolicy: redrivePolicy('a') },
  });
  await call('SetQueueAttributes', {
    QueueUrl: `${ctx.baseUrl}/000000000000/a`,
    Attributes: { RedrivePolicy: redrivePolicy('b') },
  });
});
after(async () => {
  await engine.close();
  await engine.store.close();
});

test('dead-lettering to a queue that could loop creates no cycles queue until a cycle is broken', async () => {
  await call('SendMessage', { QueueUrl: `${ctx.baseUrl}/000000000000/a`, MessageBody: 'round' });
  clock.advance(1500);
  assert.equal(await engine.sweeps.expiry(), 1, 'expired from a into b');
  assert.equal((await engine.store.messages.peek((await queue('b')).id, 0, 10)).length, 1);
  assert.equal(await queue('redrive-cycles'), undefined, 'no cycle yet, so no cycles queue');
  assert.equal(engine.deadLetterReport.cyclesBroken, 0);
});

test('a cycle broken in a transaction that is run again is logged and counted once', async () => {
  clock.advance(1500);
  const b = await queue('b');
  const target = (await deadLetterTarget(engine, b, 'expired'))!;
  let arrivals = 0;
  const counted = { ...target, arrival: (m: Parameters<typeof target.arrival>[0]) => (arrivals++, target.arrival(m)) };
  // A write that fails later in the same group commit makes it roll back and run every job again.
  const expiring = engine.store.deadLetters.expire(b.id, clock.now(), 100, counted);
  const failing = engine.store.messages.send(b.id, [
    {
      messageId: 'bad',
      body: 'x',
      md5OfBody: 'x',
      senderId: 's',
      sentAt: clock.now(),
      visibleAt: clock.now(),
      attributes: { n: { DataType: 'Number', StringValue: 1n as unknown as string } },
    },
  ]);
  await assert.rejects(failing, /BigInt/);
  const moves = await expiring;
  assert.equal(arrivals, 2, 'the expiry job ran twice');
  assert.equal(moves.length, 1, 'what the committed run did, once');
  engine.deadLettered(b, moves);
  assert.equal(engine.deadLetterReport.cyclesBroken, 1);
  assert.equal(warnings.filter((w) => w.msg?.includes('dead-letter cycle')).length, 1);
  const cycles = await queue('redrive-cycles');
  assert.ok(cycles, 'created with the parked message');
  assert.deepEqual(
    (await engine.store.messages.peek(cycles.id, 0, 10)).map((m) => m.body),
    ['round'],
  );
});
