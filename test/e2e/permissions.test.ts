/** AddPermission / RemovePermission and their enforcement for calls from another account. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AddPermissionCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  RemovePermissionCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError } from './helpers.js';

const OWNER = '111111111111';
const OTHER = '222222222222';

// Without signing, an access key id of 12 digits names the caller's account.
const clientFor = (server: ServerProcess, account: string) =>
  new SQSClient({
    endpoint: server.url,
    region: 'us-east-1',
    credentials: { accessKeyId: account, secretAccessKey: 'x' },
    maxAttempts: 1,
  });

describe('queue permissions across accounts', () => {
  let server: ServerProcess;
  useServerProcess({ storage: 'memory' }, (s) => (server = s));

  test('another account is denied until the owner grants it, and again after removal', async () => {
    const owner = clientFor(server, OWNER);
    const other = clientFor(server, OTHER);
    const { QueueUrl } = await owner.send(new CreateQueueCommand({ QueueName: 'shared' }));
    assert.match(QueueUrl!, new RegExp(`/${OWNER}/shared$`));

    await assertSqsError(other.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' })), {
      name: 'AccessDenied',
      code: 'AccessDenied',
      status: 403,
      message: `Access to the resource ${QueueUrl} is denied.`,
    });
    await assertSqsError(other.send(new GetQueueUrlCommand({ QueueName: 'shared', QueueOwnerAWSAccountId: OWNER })), {
      name: 'AccessDenied',
      code: 'AccessDenied',
      status: 403,
    });

    await owner.send(
      new AddPermissionCommand({
        QueueUrl,
        Label: 'senders',
        AWSAccountIds: [OTHER],
        Actions: ['SendMessage', 'GetQueueUrl'],
      }),
    );
    await other.send(new SendMessageCommand({ QueueUrl, MessageBody: 'granted' }));
    await other.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: 'a', MessageBody: 'batch too' }] }));
    const url = await other.send(new GetQueueUrlCommand({ QueueName: 'shared', QueueOwnerAWSAccountId: OWNER }));
    assert.equal(url.QueueUrl, QueueUrl);
    await assertSqsError(other.send(new ReceiveMessageCommand({ QueueUrl })), {
      name: 'AccessDenied',
      code: 'AccessDenied',
      status: 403,
    });
    await assertSqsError(
      other.send(
        new AddPermissionCommand({ QueueUrl, Label: 'mine', AWSAccountIds: [OTHER], Actions: ['ReceiveMessage'] }),
      ),
      { name: 'AccessDenied', code: 'AccessDenied', status: 403 },
    );

    const { Attributes } = await owner.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['Policy', 'ApproximateNumberOfMessages'] }),
    );
    assert.equal(Attributes!.ApproximateNumberOfMessages, '2');
    const policy = JSON.parse(Attributes!.Policy!);
    assert.equal(policy.Statement[0].Sid, 'senders');
    assert.equal(policy.Statement[0].Principal.AWS, `arn:aws:iam::${OTHER}:root`);
    assert.deepEqual(policy.Statement[0].Action, ['SQS:SendMessage', 'SQS:GetQueueUrl']);

    await owner.send(new RemovePermissionCommand({ QueueUrl, Label: 'senders' }));
    await assertSqsError(other.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' })), {
      name: 'AccessDenied',
      code: 'AccessDenied',
      status: 403,
    });
    const after = await owner.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['Policy'] }));
    assert.equal(after.Attributes?.Policy, undefined, 'the last permission removed the policy');
    owner.destroy();
    other.destroy();
  });

  test('labels must be new to add and known to remove, as SQS answers', async () => {
    const owner = clientFor(server, OWNER);
    const { QueueUrl } = await owner.send(new CreateQueueCommand({ QueueName: 'labels' }));
    await owner.send(
      new AddPermissionCommand({
        QueueUrl,
        Label: 'crossaccountpermission',
        AWSAccountIds: [OTHER],
        Actions: ['ReceiveMessage'],
      }),
    );
    await assertSqsError(
      owner.send(
        new AddPermissionCommand({
          QueueUrl,
          Label: 'crossaccountpermission',
          AWSAccountIds: [OTHER],
          Actions: ['SendMessage'],
        }),
      ),
      {
        name: 'InvalidParameterValue',
        code: 'InvalidParameterValue',
        status: 400,
        message: 'Value crossaccountpermission for parameter Label is invalid. Reason: Already exists.',
      },
    );
    await assertSqsError(owner.send(new RemovePermissionCommand({ QueueUrl, Label: 'crossaccountpermission2' })), {
      name: 'InvalidParameterValue',
      code: 'InvalidParameterValue',
      status: 400,
      message: "Value crossaccountpermission2 for parameter Label is invalid. Reason: can't find label.",
    });
    await assertSqsError(
      owner.send(
        new AddPermissionCommand({ QueueUrl, Label: 'bad', AWSAccountIds: [OTHER], Actions: ['DeleteQueue'] }),
      ),
      { name: 'InvalidParameterValue', code: 'InvalidParameterValue', status: 400 },
    );
    owner.destroy();
  });

  test('a Deny statement wins over an Allow', async () => {
    const owner = clientFor(server, OWNER);
    const other = clientFor(server, OTHER);
    const { QueueUrl } = await owner.send(new CreateQueueCommand({ QueueName: 'deny' }));
    const { Attributes } = await owner.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const Policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: '*', Action: 'sqs:*', Resource: Attributes!.QueueArn },
        { Effect: 'Deny', Principal: { AWS: OTHER }, Action: 'SQS:ReceiveMessage', Resource: Attributes!.QueueArn },
      ],
    });
    const { SetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
    await owner.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy } }));
    await other.send(new SendMessageCommand({ QueueUrl, MessageBody: 'allowed by *' }));
    await assertSqsError(other.send(new ReceiveMessageCommand({ QueueUrl })), {
      name: 'AccessDenied',
      code: 'AccessDenied',
      status: 403,
    });
    owner.destroy();
    other.destroy();
  });
});
