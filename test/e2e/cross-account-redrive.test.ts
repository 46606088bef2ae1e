/**
 * Two accounts under --credentials, driven by the AWS SDK: account A cannot write into B's
 * queues through imported dead-letter metadata and a move task, and a sender granted on B's
 * dead-letter queue cannot misroute B's own redrive to source the same way.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AddPermissionCommand,
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { boto3Driver, type ApiError } from '../query/drivers.js';
import { needs } from '../support/requirements.js';
import { assertSqsError, invalidParameterValue } from './helpers.js';
import { A, arnOf, B, useTwoAccounts, type Account, type TwoAccounts } from './cross-account-helpers.js';

const forged = (arn: string) => ({ DeadLetterQueueSourceArn: { DataType: 'String', StringValue: arn } }) as never;

async function queue(c: SQSClient, name: string, Attributes?: Record<string, string>): Promise<string> {
  return (await c.send(new CreateQueueCommand({ QueueName: name, Attributes }))).QueueUrl!;
}

async function depth(t: TwoAccounts, who: Account, url: string): Promise<number> {
  return (await t.ok(who, 'PeekMessages', { QueueUrl: url, MaxResults: 100 })).Messages.length;
}

describe('cross-account writes through imported dead-letter metadata', () => {
  let t: TwoAccounts;
  useTwoAccounts((x) => (t = x));

  for (const fifo of [false, true]) {
    test(`A cannot make its redrive write into B's ${fifo ? 'FIFO' : 'standard'} queue with a forged DeadLetterQueueSourceArn`, async () => {
      const a = t.sdk(A);
      const b = t.sdk(B);
      const suffix = fifo ? '.fifo' : '';
      const secret = await queue(
        b,
        `b-secret-${suffix ? 'f' : 's'}${suffix}`,
        fifo ? { FifoQueue: 'true' } : undefined,
      );
      const dlqName = `a-dlq-${fifo ? 'f' : 's'}`;
      const dlq = await queue(a, dlqName);
      await queue(a, `a-src-${fifo ? 'f' : 's'}`, {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(A, dlqName), maxReceiveCount: 1 }),
      });
      const target = arnOf(B, secret.split('/').pop()!);
      await assertSqsError(
        a.send(
          new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'pwned', MessageSystemAttributes: forged(target) }),
        ),
        invalidParameterValue(
          `Message system attribute DeadLetterQueueSourceArn is invalid. Reason: it must name a queue of this queue's account (${A.accountId}) and region (us-east-1).`,
        ),
      );
      // Whatever the DLQ holds, a redrive to source stays in A's account.
      await a.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'plain' }));
      await a.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(A, dlqName) }));
      assert.equal((await t.finished(A, arnOf(A, dlqName))).Status, 'COMPLETED');
      const got = await b.send(
        new ReceiveMessageCommand({ QueueUrl: secret, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      assert.equal(got.Messages, undefined, 'B received nothing');
      assert.equal(await depth(t, B, secret), 0, "nothing counts in B's depth");
      assert.equal(await depth(t, A, dlq), 1, 'the plain message, with no source, stays');
    });
  }

  test("a sender granted SendMessage on B's DLQ cannot misroute B's redrive to source", async () => {
    const a = t.sdk(A);
    const b = t.sdk(B);
    const dlq = await queue(b, 'b-orders-dlq');
    const src = await queue(b, 'b-orders', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(B, 'b-orders-dlq'), maxReceiveCount: 1 }),
      VisibilityTimeout: '0',
    });
    const payments = await queue(b, 'b-payments');
    const loot = await queue(a, 'a-loot');
    await b.send(
      new AddPermissionCommand({
        QueueUrl: dlq,
        Label: 'a-reports-failures',
        AWSAccountIds: [A.accountId],
        Actions: ['SendMessage'],
      }),
    );
    for (const target of [arnOf(B, 'b-payments'), arnOf(A, 'a-loot')]) {
      await assertSqsError(
        a.send(
          new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'misrouted', MessageSystemAttributes: forged(target) }),
        ),
        invalidParameterValue("Message system attribute name 'DeadLetterQueueSourceArn' is invalid."),
      );
    }
    await a.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'from A, no source' }));
    // A genuine dead-lettering in B.
    await b.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'genuine' }));
    await b.send(new ReceiveMessageCommand({ QueueUrl: src, WaitTimeSeconds: 0 }));
    await b.send(new ReceiveMessageCommand({ QueueUrl: src, WaitTimeSeconds: 0 }));
    assert.equal(await depth(t, B, dlq), 2);
    await b.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf(B, 'b-orders-dlq') }));
    assert.equal((await t.finished(B, arnOf(B, 'b-orders-dlq'))).Status, 'COMPLETED');
    const home = (await t.ok(B, 'PeekMessages', { QueueUrl: src })).Messages.map((m: { Body: string }) => m.Body);
    assert.deepEqual(home, ['genuine'], 'the genuine message went home');
    assert.equal(await depth(t, B, payments), 0);
    assert.equal(await depth(t, A, loot), 0);
    assert.equal(await depth(t, B, dlq), 1, "A's message has no source and stays");
  });

  test(
    "over the Query protocol (boto3) the same send is refused, and B's queues are AccessDenied",
    needs('boto3'),
    async () => {
      const boto = await boto3Driver(t.server.url, undefined, {
        accessKeyId: A.accessKeyId,
        secretAccessKey: A.secretAccessKey,
      });
      try {
        await queue(t.sdk(A), 'a-dlq-query');
        const secret = await queue(t.sdk(B), 'b-secret-query');
        const refused = (e: ApiError, code: string) => e.code === code;
        await assert.rejects(
          boto.call('SendMessage', {
            QueueUrl: t.urlOf(A, 'a-dlq-query'),
            MessageBody: 'pwned',
            MessageSystemAttributes: forged(arnOf(B, 'b-secret-query')),
          }),
          (e: ApiError) =>
            refused(e, 'InvalidParameterValue') && /must name a queue of this queue's account/.test(e.message),
        );
        await assert.rejects(boto.call('ReceiveMessage', { QueueUrl: secret }), (e: ApiError) =>
          refused(e, 'AccessDenied'),
        );
        assert.equal(await depth(t, B, secret), 0);
      } finally {
        await boto.close();
      }
    },
  );
});
