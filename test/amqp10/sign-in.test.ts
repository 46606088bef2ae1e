/**
 * AMQP 1.0 sign-in with --credentials: an access key and its secret (SASL PLAIN) act as
 * the key's account, on the queues its SQS and 0-9-1 clients use; guest and ANONYMOUS are
 * refused; failed sign-ins count in the server's one throttle with 0-9-1's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { close, connect, send } from './support.js';

describe('AMQP 1.0 sign-in with --credentials', { timeout: 60_000 }, () => {
  let redrive: AmqpServer;
  let sqs: SQSClient;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'redrive-amqp10-'));
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ AKID10: { secretAccessKey: 's3cret', accountId: '111122223333' } }));
    redrive = await startAmqpServer({ args: ['--credentials', file] });
    sqs = new SQSClient({
      endpoint: redrive.server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKID10', secretAccessKey: 's3cret' },
      maxAttempts: 1,
    });
  });
  after(async () => {
    sqs?.destroy();
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });

  test("an access key acts as its account: a 1.0 send reaches that account's SQS queue", async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'keyed10' }));
    const c = await connect(redrive.port, { username: 'AKID10', password: 's3cret' });
    assert.deepEqual(await send(c, '/queues/keyed10', [{ body: 'signed in' }]), [{ outcome: 'accepted' }]);
    await close(c);
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: `${redrive.server.url}/111122223333/keyed10`, WaitTimeSeconds: 1 }),
    );
    assert.equal(got.Messages?.[0]?.Body, 'signed in');
  });

  test('guest and ANONYMOUS are refused', async () => {
    await assert.rejects(connect(redrive.port));
    await assert.rejects(
      connect(redrive.port, { username: undefined, password: undefined, sasl_mechanisms: ['ANONYMOUS'] } as never),
    );
  });

  test('failed 1.0 sign-ins throttle the address for 0-9-1 too, the right password included', async () => {
    for (let i = 0; i < 12; i++)
      await connect(redrive.port, { username: 'AKID10', password: 'guess' }).then(close, () => undefined);
    await assert.rejects(connect(redrive.port, { username: 'AKID10', password: 's3cret' }), 'throttled over 1.0');
    await assert.rejects(amqp.connect(`amqp://AKID10:s3cret@127.0.0.1:${redrive.port}`), 'and over 0-9-1');
    assert.match(
      redrive.server.output(),
      /AMQP PLAIN login refused: user 'AKID10' - too many failed logins, throttled/,
    );
  });
});
