/**
 * What one account may hold (src/engine/quotas.ts, the console's sessions): queues,
 * policies, move tasks, waiting long polls and console sessions. Each attack comes from
 * the attacker's account, is refused with the protocol's own error past its quota, and
 * leaves the other accounts served. The quotas are lowered by their flags so the tests are
 * cheap; the defaults are in docs/security.md.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import amqp from 'amqplib';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { assertServed, startTenants, TENANTS, type Tenant, type TenantServer } from '../support/hostile-tenant.js';

const QUEUES = 8;
const POLICIES = 3;
const LONG_POLLS = 2;

/** The SDK's error for a call expected to fail. */
async function refusal(call: Promise<unknown>): Promise<{ name: string; message: string; status?: number }> {
  try {
    await call;
  } catch (e) {
    const err = e as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return { name: err.name, message: err.message, status: err.$metadata?.httpStatusCode };
  }
  assert.fail('the call succeeded');
}

describe('quotas per account', () => {
  let t: TenantServer;
  let attacker: SQSClient;
  before(async () => {
    t = await startTenants({
      storage: 'memory',
      manualClock: true,
      args: [
        '--max-queues-per-account',
        String(QUEUES),
        '--max-policies-per-account',
        String(POLICIES),
        '--max-move-tasks-per-account',
        '1',
        '--max-long-polls-per-account',
        String(LONG_POLLS),
      ],
    });
    attacker = t.client('attacker');
  });
  after(() => t?.stop());

  test('queues: past the quota CreateQueue is OverLimit; an existing queue is still returned; a delete frees one', async () => {
    const probe = await t.probe();
    const urls: string[] = [];
    for (let i = 0; i < QUEUES; i++)
      urls.push((await attacker.send(new CreateQueueCommand({ QueueName: `hoard-${i}` }))).QueueUrl!);
    for (let i = 0; i < 50; i++) {
      const refused = await refusal(attacker.send(new CreateQueueCommand({ QueueName: `hoard-more-${i}` })));
      assert.equal(refused.name, 'OverLimit');
      assert.equal(refused.status, 403);
      assert.match(refused.message, new RegExp(`already has ${QUEUES} queues`));
    }
    const served = await probe.stop();
    // CreateQueue of a queue it has is idempotent, at the quota too.
    assert.equal((await attacker.send(new CreateQueueCommand({ QueueName: 'hoard-0' }))).QueueUrl, urls[0]);
    await attacker.send(new DeleteQueueCommand({ QueueUrl: urls[4] }));
    await attacker.send(new CreateQueueCommand({ QueueName: 'hoard-replacement' }));
    // The victim's own quota is untouched.
    const victim = t.client('victim');
    for (let i = 0; i < QUEUES; i++) await victim.send(new CreateQueueCommand({ QueueName: `victim-${i}` }));
    // Clean up for the tests below, which need queues of their own.
    for (const url of urls.filter((_, i) => i !== 4)) await attacker.send(new DeleteQueueCommand({ QueueUrl: url }));
    assertServed(served, 'an account creating queues past its quota');
  });

  test("policies: past the quota a PUT is RabbitMQ's bad_request; a replacement is not counted twice", async () => {
    const put = (tenant: Tenant, name: string) => {
      const k = TENANTS[tenant];
      return fetch(`${t.server.url}/api/policies/%2F/${name}`, {
        method: 'PUT',
        headers: {
          authorization: `Basic ${Buffer.from(`${k.accessKeyId}:${k.secretAccessKey}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ pattern: `^${name}`, definition: { 'max-length': 10 } }),
      });
    };
    for (let i = 0; i < POLICIES; i++) assert.equal((await put('attacker', `p${i}`)).status, 201);
    const over = await put('attacker', 'one-more');
    assert.equal(over.status, 400);
    assert.deepEqual(await over.json(), {
      error: 'bad_request',
      reason: `Validation failed\n\npolicy limit in vhost '/' (${POLICIES}) is reached: delete a policy first\n`,
    });
    assert.equal((await put('attacker', 'p0')).status, 204, 'replacing a policy it has');
    assert.equal((await put('victim', 'p0')).status, 201, "another account's quota is its own");
  });

  test('move tasks: past the quota StartMessageMoveTask is OverLimit', async () => {
    const source = async (name: string) => {
      const dlq = (await attacker.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
      const { Attributes } = await attacker.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }),
      );
      const { QueueUrl: src } = await attacker.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: 1 }),
          },
        }),
      );
      const srcArn = (
        await attacker.send(new GetQueueAttributesCommand({ QueueUrl: src, AttributeNames: ['QueueArn'] }))
      ).Attributes!.QueueArn!;
      for (let i = 0; i < 5; i++) await attacker.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `m${i}` }));
      return { SourceArn: Attributes!.QueueArn!, DestinationArn: srcArn };
    };
    const first = await source('tasks-a');
    const second = await source('tasks-b');
    // One message a second on a clock that does not move: the task stays RUNNING.
    await attacker.send(new StartMessageMoveTaskCommand({ ...first, MaxNumberOfMessagesPerSecond: 1 }));
    const refused = await refusal(attacker.send(new StartMessageMoveTaskCommand(second)));
    assert.equal(refused.name, 'OverLimit');
    assert.match(refused.message, /already 1 active message movement tasks/);
  });

  test("long polls: past the account's share a long poll is 503 at once; the bystander's long poll waits", async () => {
    const { QueueUrl: own } = await attacker.send(new CreateQueueCommand({ QueueName: 'polls' }));
    const waiting = Array.from({ length: LONG_POLLS }, () =>
      attacker.send(new ReceiveMessageCommand({ QueueUrl: own, WaitTimeSeconds: 20 })),
    );
    // They are waiting once the next one is refused.
    let refused: Awaited<ReturnType<typeof refusal>> | undefined;
    for (const until = Date.now() + 10_000; !refused && Date.now() < until; ) {
      refused = await refusal(attacker.send(new ReceiveMessageCommand({ QueueUrl: own, WaitTimeSeconds: 20 }))).catch(
        () => undefined,
      );
    }
    assert.equal(refused?.name, 'ServiceUnavailable');
    assert.equal(refused?.status, 503);
    assert.match(refused!.message, /Too many of this account's long polls are waiting/);
    // The bystander's long poll waits, and gets the message sent while it waits.
    const bystander = t.client('bystander');
    const { QueueUrl: theirs } = await bystander.send(new CreateQueueCommand({ QueueName: 'bystander-polls' }));
    const polled = bystander.send(new ReceiveMessageCommand({ QueueUrl: theirs, WaitTimeSeconds: 20 }));
    await new Promise((r) => setTimeout(r, 200));
    await bystander.send(new SendMessageCommand({ QueueUrl: theirs, MessageBody: 'worth the wait' }));
    assert.equal((await polled).Messages?.[0]?.Body, 'worth the wait');
    await t.server.advanceClock(21_000);
    assert.deepEqual(
      (await Promise.all(waiting)).map((r) => r.Messages),
      Array(LONG_POLLS).fill(undefined),
    );
  });
});

describe('console sessions per account', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({ storage: 'memory' });
  });
  after(() => t?.stop());

  /** Signs in as the tenant; the session cookie. */
  const signIn = async (tenant: Tenant) => {
    const res = await fetch(`${t.server.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        accessKeyId: TENANTS[tenant].accessKeyId,
        secretAccessKey: TENANTS[tenant].secretAccessKey,
      }).toString(),
    });
    await res.arrayBuffer();
    assert.equal(res.status, 303);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  };
  const signedIn = async (cookie: string) => {
    const res = await fetch(`${t.server.url}/console/`, { redirect: 'manual', headers: { cookie } });
    await res.arrayBuffer();
    return res.status === 200;
  };

  test("an account signing in 2,000 times (20 times its share) signs out only its own oldest sessions, never another account's", async () => {
    const victim = await signIn('victim');
    const first = await signIn('attacker');
    let last = first;
    for (let batch = 0; batch < 20; batch++) {
      const made = await Promise.all(Array.from({ length: 100 }, () => signIn('attacker')));
      last = made.at(-1)!;
    }
    assert.equal(await signedIn(victim), true, 'the victim is still signed in');
    assert.equal(await signedIn(last), true);
    assert.equal(await signedIn(first), false, "the attacker's oldest session went");
  });
});

describe('the queue quota over AMQP', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({ storage: 'memory', amqp: true, args: ['--max-queues-per-account', '2'] });
  });
  after(() => t?.stop());

  test("queue.declare past the quota is RabbitMQ's 406 PRECONDITION_FAILED; redeclaring a queue it has is not", async () => {
    const conn = await amqp.connect(t.amqpUrl('attacker'));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue('amqp-a');
      await ch.assertQueue('amqp-b');
      await ch.assertQueue('amqp-a');
      ch.on('error', () => undefined);
      await assert.rejects(ch.assertQueue('amqp-c'), (e: Error) => {
        assert.match(
          e.message,
          /406 \(PRECONDITION-FAILED\) with message "PRECONDITION_FAILED - cannot declare queue 'amqp-c': queue limit in vhost '\/' \(2\) is reached"/,
        );
        return true;
      });
      // Another account declares its own.
      const other = await amqp.connect(t.amqpUrl('victim'));
      try {
        await (await other.createChannel()).assertQueue('amqp-c');
      } finally {
        await other.close();
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
  });
});
