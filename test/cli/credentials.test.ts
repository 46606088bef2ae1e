/**
 * The CLI on a server started with --credentials and two accounts: signed requests with
 * keys from the environment or from a profile of a shared credentials file, each account
 * seeing only its own queues, and errors that say what to do when signing fails.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { AwsFiles, runCli } from './support.js';

let server: ServerProcess;
const files = new AwsFiles();
const envA = { AWS_ACCESS_KEY_ID: 'AKIDTEAMA', AWS_SECRET_ACCESS_KEY: 'secret-a' };

before(async () => {
  const dir = files.dir;
  writeFileSync(
    join(dir, 'server-keys.json'),
    JSON.stringify({
      AKIDTEAMA: { secretAccessKey: 'secret-a', accountId: '111111111111' },
      AKIDTEAMB: { secretAccessKey: 'secret-b', accountId: '222222222222' },
    }),
  );
  files.write(
    '[team-b]\naws_access_key_id = AKIDTEAMB\naws_secret_access_key = secret-b\n\n[wrong]\naws_access_key_id = AKIDTEAMB\naws_secret_access_key = nope\n',
    '[profile team-b]\nregion = eu-west-1\n',
  );
  server = await startServerProcess({ storage: 'memory', args: ['--credentials', join(dir, 'server-keys.json')] });
});
after(async () => {
  await server.stop();
  server.cleanup();
  files.cleanup();
});

const cli = (env: Record<string, string>, ...args: string[]) =>
  runCli([...args, '--endpoint', server.url], { env: { ...files.env(), ...env } });

test('keys from the environment sign for account A; a profile of the credentials file signs for account B; each sees only its queues', async () => {
  const a = await cli(envA, 'queues', 'create', 'a-orders');
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stdout, `${server.url}/111111111111/a-orders\n`);
  const b = await cli({}, 'queues', 'create', 'b-orders', '--profile', 'team-b');
  assert.equal(b.code, 0, b.stderr);
  // The profile's region is eu-west-1, not the server's: its URL names it (docs/regions.md).
  assert.equal(b.stdout, `${server.url}/eu-west-1/222222222222/b-orders\n`);
  const byProfileEnv = await cli({ AWS_PROFILE: 'team-b' }, 'queues', 'list', '--json');
  assert.deepEqual(
    (JSON.parse(byProfileEnv.stdout) as { QueueName: string }[]).map((q) => q.QueueName),
    ['b-orders'],
  );
  const listA = await cli(envA, 'queues', 'list');
  assert.match(listA.stdout, /^a-orders\s/m);
  assert.doesNotMatch(listA.stdout, /b-orders/);
  const other = await cli(envA, 'messages', 'send', 'b-orders', 'hi');
  assert.equal(other.code, 1);
  assert.match(other.stderr, /queue "b-orders" does not exist in this account/);
});

test('--profile with keys in the environment too: the profile signs, and the SDK prints no warning', async () => {
  const r = await cli(envA, 'queues', 'list', '--json', '--profile', 'team-b');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(
    (JSON.parse(r.stdout) as { QueueName: string }[]).map((q) => q.QueueName),
    ['b-orders'],
  );
});

test('queues list in a region with no queues names the region', async () => {
  const r = await cli(envA, 'queues', 'list', '--region', 'ap-south-1');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'no queues in ap-south-1\n');
  const prefixed = await cli(envA, 'queues', 'list', '--region', 'ap-south-1', '--prefix', 'orders');
  assert.equal(prefixed.stdout, 'no queues starting with orders in ap-south-1\n');
});

test('the dlq commands sign too: list and a dry-run redrive work for the account of the keys', async () => {
  assert.equal((await cli(envA, 'queues', 'create', 'a-dlq')).code, 0);
  assert.equal((await cli(envA, 'queues', 'create', 'a-src', '--dlq', 'a-dlq', '--max-receives', '1')).code, 0);
  const list = await cli(envA, 'dlq', 'list');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^a-dlq\s+0\s+0\s+-\s+a-src$/m);
  const dry = await cli(envA, 'dlq', 'redrive', 'a-dlq', '--dry-run');
  assert.equal(dry.stdout, '0 messages would move (all)\n');
});

test('unsigned, with a wrong secret, with an unknown key or a missing profile: an error that says what to do, the API code with --verbose', async () => {
  const unsigned = await cli({}, 'queues', 'list');
  assert.equal(unsigned.code, 1);
  assert.match(
    unsigned.stderr,
    /requires signed requests and no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use --profile/,
  );
  assert.doesNotMatch(unsigned.stderr, /MissingAuthenticationToken/, 'the code only with --verbose');
  const verbose = await cli({}, 'queues', 'list', '--verbose');
  assert.match(
    verbose.stderr,
    /\(ListQueueSummaries: MissingAuthenticationToken: Request is missing Authentication Token\)/,
  );
  const wrong = await cli({}, 'queues', 'list', '--profile', 'wrong');
  assert.match(wrong.stderr, /refused the signature: the secret access key does not match/);
  const unknown = await cli(
    { AWS_ACCESS_KEY_ID: 'AKIDNOBODY', AWS_SECRET_ACCESS_KEY: 'x' },
    'queues',
    'list',
    '--json',
  );
  assert.equal(unknown.code, 1);
  assert.deepEqual(JSON.parse(unknown.stderr).error, {
    message: `${server.url} does not know this access key: check AWS_ACCESS_KEY_ID or the profile (--profile)`,
    code: 'InvalidClientTokenId',
    action: 'ListQueueSummaries',
    detail: 'The security token included in the request is invalid.',
  });
  const missing = await cli({}, 'queues', 'list', '--profile', 'nobody');
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /profile "nobody" gives no credentials: add aws_access_key_id and aws_secret_access_key to \[nobody\] in \S+credentials/,
  );
});

test("the region signed for: --region, then AWS_REGION, then the profile's region in the config file, else us-east-1; unsigned without keys", async () => {
  const seen: (string | undefined)[] = [];
  const fake = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{"Queues":[]}');
  });
  fake.listen(0, '127.0.0.1');
  await once(fake, 'listening');
  const endpoint = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const list = (env: Record<string, string>, ...args: string[]) =>
    runCli(['queues', 'list', '--endpoint', endpoint, ...args], { env: { ...files.env(), ...env } });
  try {
    for (const r of [
      await list(envA, '--region', 'ap-south-1'),
      await list({ ...envA, AWS_REGION: 'eu-north-1' }),
      await list({}, '--profile', 'team-b'),
      await list(envA),
      await list({}),
    ]) {
      assert.equal(r.code, 0, r.stderr);
    }
    const scopes = seen.map((a) =>
      a ? /Credential=([^,]+)/.exec(a)![1]!.replace(/\/\d{8}\//, '/<date>/') : 'unsigned',
    );
    assert.deepEqual(scopes, [
      'AKIDTEAMA/<date>/ap-south-1/sqs/aws4_request',
      'AKIDTEAMA/<date>/eu-north-1/sqs/aws4_request',
      'AKIDTEAMB/<date>/eu-west-1/sqs/aws4_request',
      'AKIDTEAMA/<date>/us-east-1/sqs/aws4_request',
      'unsigned',
    ]);
  } finally {
    fake.closeAllConnections();
    fake.close();
  }
});
