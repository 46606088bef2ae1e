/**
 * Differential check of dead-letter histories against real RabbitMQ (3.10+, on
 * 127.0.0.1:5672, guest/guest, or REDRIVE_TEST_AMQP_URL): the same scenarios run on both
 * brokers, and the dead message's body and the reason, count and order of its history
 * entries must be the same. When RabbitMQ is unreachable the scenarios fail under CI=true
 * (CI must compare) and are skipped, with the reason, everywhere else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { startServerProcess } from '../support/server-process.js';
import { RabbitBroker, RedriveBroker, type Broker, type Got } from './brokers.js';
import { skipReason } from '../support/requirements.js';

const AMQP_URL = process.env.REDRIVE_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** The broker's address without its credentials, for messages. */
const AMQP_ADDRESS = AMQP_URL.replace(/^amqps?:\/\/([^@/]*@)?/, '').replace(/\/.*$/, '');

interface Scenario {
  name: string;
  /** Returns the dead-lettered message as it finally arrives. */
  run(b: Broker): Promise<Got | undefined>;
}

const scenarios: Scenario[] = [
  {
    name: 'reject',
    async run(b) {
      await b.declare('rej-dlq');
      await b.declare('rej', { deadLetterTo: 'rej-dlq' });
      await b.publish('rej', 'r');
      await b.reject((await b.get('rej'))!);
      return b.get('rej-dlq');
    },
  },
  {
    name: 'ttl expiry',
    async run(b) {
      await b.declare('ttl-dlq');
      await b.declare('ttl', { deadLetterTo: 'ttl-dlq', ttlMs: 1000 });
      await b.publish('ttl', 't');
      await b.pass(1000);
      return b.get('ttl-dlq');
    },
  },
  {
    name: 'maxlen drop-head',
    async run(b) {
      await b.declare('len-dlq');
      await b.declare('len', { deadLetterTo: 'len-dlq', maxLength: 2 });
      for (const body of ['m1', 'm2', 'm3']) await b.publish('len', body);
      return b.get('len-dlq');
    },
  },
  {
    name: 'delivery limit (quorum queue)',
    async run(b) {
      await b.declare('lim-dlq');
      await b.declare('lim', { deadLetterTo: 'lim-dlq', deliveryLimit: 1 });
      await b.publish('lim', 'd');
      for (let i = 0; i < 5; i++) {
        const got = await b.get('lim', 500);
        if (!got) break;
        await b.release(got);
      }
      return b.get('lim-dlq');
    },
  },
  {
    name: 'repeated deaths in two queues',
    async run(b) {
      await b.declare('ring-a', { deadLetterTo: 'ring-b' });
      await b.declare('ring-b', { deadLetterTo: 'ring-a' });
      await b.publish('ring-a', 'w');
      for (const q of ['ring-a', 'ring-b', 'ring-a']) await b.reject((await b.get(q))!);
      return b.get('ring-b');
    },
  },
  {
    name: 'mixed reasons along a chain',
    async run(b) {
      await b.declare('mix-end');
      await b.declare('mix-mid', { deadLetterTo: 'mix-end' });
      await b.declare('mix-src', { deadLetterTo: 'mix-mid', maxLength: 1 });
      await b.publish('mix-src', 'first');
      await b.publish('mix-src', 'second');
      await b.reject((await b.get('mix-mid'))!);
      return b.get('mix-end');
    },
  },
  {
    name: 'repeated expiry with a rejection between',
    async run(b) {
      await b.declare('rex-a', { deadLetterTo: 'rex-b', ttlMs: 1000 });
      await b.declare('rex-b', { deadLetterTo: 'rex-a' });
      await b.publish('rex-a', 'e');
      await b.pass(1000);
      await b.reject((await b.get('rex-b'))!);
      await b.pass(1000);
      return b.get('rex-b');
    },
  },
  {
    // RabbitMQ drops the message; Redrive parks it in redrive-cycles. Either way it is in
    // neither queue of the cycle, and the loop has stopped.
    name: 'ttl cycle without a rejection is broken',
    async run(b) {
      await b.declare('cyc-a', { deadLetterTo: 'cyc-b', ttlMs: 1000 });
      await b.declare('cyc-b', { deadLetterTo: 'cyc-a', ttlMs: 1000 });
      await b.publish('cyc-a', 'c');
      await b.pass(1000);
      await b.pass(1000);
      await b.pass(1000);
      const [a, c] = [await b.get('cyc-a', 500), await b.get('cyc-b', 500)];
      return { body: `cyc-a: ${a?.body ?? '-'}, cyc-b: ${c?.body ?? '-'}`, history: [], handle: undefined, queue: '' };
    },
  },
];

const show = (g: Got | undefined) =>
  g ? `${g.body} ${JSON.stringify(g.history.map((e) => [e.queue, e.reason, e.count]))}` : '(nothing)';

describe('dead-letter histories match RabbitMQ', () => {
  let rabbit: RabbitBroker | undefined;
  let unreachable = '';
  let redrive: RedriveBroker | undefined;

  before(async () => {
    try {
      rabbit = await RabbitBroker.connect(AMQP_URL);
    } catch (e) {
      unreachable = `RabbitMQ is not reachable at ${AMQP_ADDRESS} (${(e as Error).message})`;
      return;
    }
    redrive = new RedriveBroker(await startServerProcess({ storage: 'memory', manualClock: true }));
  });

  after(async () => {
    await Promise.allSettled([rabbit?.close(), redrive?.close()]);
  });

  /** Both brokers, or undefined after skipping the test (failing it under CI=true). */
  function brokers(t: TestContext): [RabbitBroker, RedriveBroker] | undefined {
    if (rabbit && redrive) return [rabbit, redrive];
    if (process.env.CI === 'true') {
      assert.fail(
        `RabbitMQ at ${AMQP_ADDRESS} is needed when CI=true (guest/guest, or another broker in REDRIVE_TEST_AMQP_URL): ${unreachable}`,
      );
    }
    t.skip(skipReason('rabbitmq', unreachable));
    return undefined;
  }

  for (const s of scenarios) {
    test(s.name, async (t) => {
      const both = brokers(t);
      if (!both) return;
      const [want, got] = [await s.run(both[0]), await s.run(both[1])];
      assert.ok(want !== undefined, `${both[0].name} dead-lettered nothing: the scenario is broken`);
      t.diagnostic(`${both[0].name}: ${show(want)}`);
      assert.equal(show(got), show(want), `Redrive differs from ${both[0].name}`);
    });
  }
});
