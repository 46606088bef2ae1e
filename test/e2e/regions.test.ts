/**
 * Regions (docs/regions.md): one server, queues per (account, region, name). The region
 * of a request is its SigV4 scope's, else a host `sqs.<region>.…`'s, else --region. Two
 * regions are driven by the AWS SDK (JSON) and by the Debian CLI (Query), without and
 * with --credentials.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { awsCliDriver, boto3Driver, PYTHON, type Driver, type Keys } from '../query/drivers.js';
import { assertSqsError, invalidParameterValue, SDK_HEADER } from './helpers.js';
import { needs } from '../support/requirements.js';

const KEYS: Keys = { accessKeyId: 'AKIDREGIONS', secretAccessKey: 'regions-secret' };
const ACCOUNT = '123456789012';
const EAST = 'us-east-1';
const WEST = 'eu-west-1';

const sdk = (server: ServerProcess, region: string, keys: Keys) =>
  new SQSClient({ endpoint: server.url, region, credentials: keys, maxAttempts: 1 });

for (const signed of [false, true]) {
  describe(`two regions, ${signed ? 'with' : 'without'} --credentials`, () => {
    let server: ServerProcess;
    const keys: Keys = signed ? KEYS : { accessKeyId: ACCOUNT, secretAccessKey: 'x' };
    const clis: Driver[] = [];
    const credentials = { [KEYS.accessKeyId]: { secretAccessKey: KEYS.secretAccessKey, accountId: ACCOUNT } };
    useServerProcess(
      { storage: 'memory', credentials: signed ? credentials : undefined, args: ['--region', EAST] },
      (s) => {
        server = s;
      },
      () => Promise.all(clis.map((c) => c.close())),
    );

    test("the SDK: one name in two regions is two queues, with ARNs in their regions; ListQueues lists the caller's region", async () => {
      const east = sdk(server, EAST, keys);
      const west = sdk(server, WEST, keys);
      const eastUrl = (
        await east.send(new CreateQueueCommand({ QueueName: 'orders', Attributes: { DelaySeconds: '0' } }))
      ).QueueUrl!;
      const westUrl = (
        await west.send(new CreateQueueCommand({ QueueName: 'orders', Attributes: { DelaySeconds: '5' } }))
      ).QueueUrl!;
      const arn = async (c: SQSClient, QueueUrl: string) =>
        (await c.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn', 'DelaySeconds'] })))
          .Attributes!;
      // One endpoint, two regions, two URLs; the default region's is the plain one.
      assert.equal(eastUrl, `${server.url}/${ACCOUNT}/orders`);
      assert.equal(westUrl, `${server.url}/${WEST}/${ACCOUNT}/orders`);
      assert.equal((await west.send(new GetQueueUrlCommand({ QueueName: 'orders' }))).QueueUrl, westUrl);
      assert.deepEqual((await west.send(new ListQueuesCommand({ QueueNamePrefix: 'orders' }))).QueueUrls, [westUrl]);
      assert.deepEqual((await east.send(new ListQueuesCommand({ QueueNamePrefix: 'orders' }))).QueueUrls, [eastUrl]);
      // The URL names its queue whichever region the client is set to.
      assert.equal((await arn(east, westUrl)).QueueArn, `arn:aws:sqs:${WEST}:${ACCOUNT}:orders`);
      assert.deepEqual(await arn(east, eastUrl), {
        QueueArn: `arn:aws:sqs:${EAST}:${ACCOUNT}:orders`,
        DelaySeconds: '0',
      });
      assert.deepEqual(
        await arn(west, westUrl),
        { QueueArn: `arn:aws:sqs:${WEST}:${ACCOUNT}:orders`, DelaySeconds: '5' },
        'not the same queue',
      );
      await east.send(new SendMessageCommand({ QueueUrl: eastUrl, MessageBody: 'for the east' }));
      const got = await west.send(new ReceiveMessageCommand({ QueueUrl: westUrl, MaxNumberOfMessages: 10 }));
      assert.equal(got.Messages, undefined, 'the west queue is empty');
      const mine = await east.send(new ReceiveMessageCommand({ QueueUrl: eastUrl, MaxNumberOfMessages: 10 }));
      assert.deepEqual(
        mine.Messages?.map((m) => m.Body),
        ['for the east'],
      );
      await west.send(new CreateQueueCommand({ QueueName: 'west-only' }));
      const names = async (c: SQSClient) =>
        ((await c.send(new ListQueuesCommand({}))).QueueUrls ?? []).map((u) => u.split('/').pop()).sort();
      assert.deepEqual(await names(west), ['orders', 'west-only']);
      assert.ok(!(await names(east)).includes('west-only'), "ListQueues lists the caller's region only");
      if (signed) return; // /metrics then needs a token (docs/monitoring.md); its labels are the same either way.
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const visible = (region: string) =>
        new RegExp(
          `redrive_approximate_number_of_messages_visible\\{queue_name="orders",account_id="${ACCOUNT}",region="${region}"[^}]*\\} 0`,
        );
      assert.match(metrics, visible(EAST));
      assert.match(metrics, visible(WEST), "one series per region, labelled with the queue's own region");
    });

    test('the Debian CLI (Query, --region): the same, on its own queue name', needs('aws-cli'), async () => {
      const east = awsCliDriver(server.url, { region: EAST, keys });
      const west = awsCliDriver(server.url, { region: WEST, keys });
      clis.push(east, west);
      const eastUrl = (await east.call('CreateQueue', { QueueName: 'cli-jobs' })).QueueUrl as string;
      const westUrl = (await west.call('CreateQueue', { QueueName: 'cli-jobs' })).QueueUrl as string;
      const arnOf = async (cli: Driver, QueueUrl: string) =>
        (
          (await cli.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['QueueArn'] })).Attributes as Record<
            string,
            string
          >
        ).QueueArn;
      assert.notEqual(eastUrl, westUrl, 'one URL per region');
      assert.equal(westUrl, `${server.url}/${WEST}/${ACCOUNT}/cli-jobs`);
      assert.equal(await arnOf(east, eastUrl), `arn:aws:sqs:${EAST}:${ACCOUNT}:cli-jobs`);
      assert.equal(await arnOf(west, westUrl), `arn:aws:sqs:${WEST}:${ACCOUNT}:cli-jobs`);
      await west.call('SendMessage', { QueueUrl: westUrl, MessageBody: 'west' });
      const counts = async (cli: Driver, QueueUrl: string) =>
        (
          (await cli.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }))
            .Attributes as Record<string, string>
        ).ApproximateNumberOfMessages;
      assert.equal(await counts(west, westUrl), '1');
      assert.equal(await counts(east, eastUrl), '0');
      const listed = async (cli: Driver) =>
        ((await cli.call('ListQueues', { QueueNamePrefix: 'cli-' })).QueueUrls as string[] | undefined) ?? [];
      assert.deepEqual(await listed(east), [eastUrl]);
      assert.deepEqual(await listed(west), [westUrl]);
      assert.equal((await west.call('GetQueueUrl', { QueueName: 'cli-jobs' })).QueueUrl, westUrl);
      // boto3 (Query) through the same endpoint, and a Query request sent to the URL itself.
      const boto = await boto3Driver(server.url, PYTHON, keys);
      clis.push(boto);
      assert.equal(await counts(boto, westUrl), '1');
      if (!signed) {
        const port = new URL(server.url).port;
        const asAccount = `AWS4-HMAC-SHA256 Credential=${ACCOUNT}/20260101/${EAST}/sqs/aws4_request, SignedHeaders=host, Signature=00`;
        const onPath = await queryAt(
          server,
          `127.0.0.1:${port}`,
          `/${WEST}/${ACCOUNT}/cli-jobs`,
          { Action: 'GetQueueAttributes', 'AttributeName.1': 'QueueArn' },
          asAccount,
        );
        assert.match(onPath, new RegExp(`arn:aws:sqs:${WEST}:${ACCOUNT}:cli-jobs`));
      }
    });

    test("a RedrivePolicy naming another region's queue is refused, as SQS refuses it; the same region is accepted", async () => {
      const east = sdk(server, EAST, keys);
      const west = sdk(server, WEST, keys);
      const source = (await east.send(new CreateQueueCommand({ QueueName: 'src' }))).QueueUrl!;
      await west.send(new CreateQueueCommand({ QueueName: 'dlq' }));
      const policy = (region: string) =>
        JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:${region}:${ACCOUNT}:dlq`, maxReceiveCount: 3 });
      await assertSqsError(
        east.send(new SetQueueAttributesCommand({ QueueUrl: source, Attributes: { RedrivePolicy: policy(WEST) } })),
        invalidParameterValue(
          `Value ${policy(WEST)} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.`,
        ),
      );
      await assertSqsError(
        east.send(new CreateQueueCommand({ QueueName: 'src2', Attributes: { RedrivePolicy: policy(WEST) } })),
        invalidParameterValue(/Dead letter target does not exist/),
      );
      await east.send(new CreateQueueCommand({ QueueName: 'dlq' }));
      await east.send(new SetQueueAttributesCommand({ QueueUrl: source, Attributes: { RedrivePolicy: policy(EAST) } }));
      // A move task's destination is in the caller's region too.
      await assertSqsError(
        east.send(
          new StartMessageMoveTaskCommand({
            SourceArn: `arn:aws:sqs:${EAST}:${ACCOUNT}:dlq`,
            DestinationArn: `arn:aws:sqs:${WEST}:${ACCOUNT}:dlq`,
          }),
        ),
        {
          name: 'ResourceNotFoundException',
          status: 404,
          message: "The resource that you specified for the DestinationArn parameter doesn't exist.",
        },
      );
    });
  });
}

/** A raw Query request with a Host header of our choosing (fetch cannot set one). */
function query(
  server: ServerProcess,
  host: string,
  params: Record<string, string>,
  authorization?: string,
): Promise<string> {
  return queryAt(server, host, '/', params, authorization);
}

function queryAt(
  server: ServerProcess,
  host: string,
  path: string,
  params: Record<string, string>,
  authorization?: string,
): Promise<string> {
  const url = new URL(server.url);
  const body = new URLSearchParams({ ...params, Version: '2012-11-05' }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path,
        headers: {
          host,
          'content-type': 'application/x-www-form-urlencoded',
          ...SDK_HEADER,
          ...(authorization ? { authorization } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the region of an unsigned request comes from a host sqs.<region>.…', () => {
  let server: ServerProcess;
  useServerProcess({ storage: 'memory', args: ['--region', EAST] }, (s) => (server = s));

  test("queue URLs follow the host, a URL resolves in its host's region, another region's URL gets that region's host", async () => {
    const port = new URL(server.url).port;
    const westHost = `sqs.${WEST}.localhost:${port}`;
    const created = await query(server, westHost, { Action: 'CreateQueue', QueueName: 'by-host' });
    assert.match(
      created,
      new RegExp(`<QueueUrl>http://${westHost.replace(/\./g, '\\.')}/000000000000/by-host</QueueUrl>`),
    );
    const arn = await query(server, westHost, {
      Action: 'GetQueueAttributes',
      QueueUrl: `http://${westHost}/000000000000/by-host`,
      'AttributeName.1': 'QueueArn',
    });
    assert.match(arn, new RegExp(`arn:aws:sqs:${WEST}:000000000000:by-host`));
    // Another host: nothing of the west is listed there, and the default region serves a plain host.
    assert.doesNotMatch(await query(server, `sqs.${EAST}.localhost:${port}`, { Action: 'ListQueues' }), /by-host/);
    assert.doesNotMatch(await query(server, `127.0.0.1:${port}`, { Action: 'ListQueues' }), /by-host/);
    // The URL's host names its region, whichever host the request came by.
    const viaEast = await query(server, `127.0.0.1:${port}`, {
      Action: 'GetQueueAttributes',
      QueueUrl: `http://${westHost}/000000000000/by-host`,
      'AttributeName.1': 'QueueArn',
    });
    assert.match(viaEast, new RegExp(`arn:aws:sqs:${WEST}:000000000000:by-host`));
    // Signed for the west (scope) but sent to the east's host: the URL is the west's host.
    const scope = `AWS4-HMAC-SHA256 Credential=AKID/20260101/${WEST}/sqs/aws4_request, SignedHeaders=host, Signature=00`;
    const url = await query(
      server,
      `sqs.${EAST}.localhost:${port}`,
      { Action: 'GetQueueUrl', QueueName: 'by-host' },
      scope,
    );
    assert.match(url, new RegExp(`<QueueUrl>http://${westHost.replace(/\./g, '\\.')}/000000000000/by-host</QueueUrl>`));
  });
});
