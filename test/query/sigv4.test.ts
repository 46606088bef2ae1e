import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { needs } from '../support/requirements.js';
import { boto3Driver, jsonSdkDriver, PYTHON, type Driver, type Keys } from './drivers.js';
import { expectError } from './scenarios.js';

const GOOD: Keys = { accessKeyId: 'AKIDGOOD', secretAccessKey: 'right-secret' };
const ACCOUNT = '111111111111';
const errors = {
  mismatch: {
    code: 'SignatureDoesNotMatch',
    status: 403,
    message:
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
  },
  unknownKey: {
    code: 'InvalidClientTokenId',
    status: 403,
    message: 'The security token included in the request is invalid.',
  },
  expired: { code: 'RequestExpired', status: 400, message: 'Request has expired.' },
};

const client = (url: string, keys: Keys, extra: Partial<SQSClientConfig> = {}) =>
  new SQSClient({ endpoint: url, region: 'us-east-1', credentials: keys, maxAttempts: 1, ...extra });

function presign(url: string, keys: Keys, expiresIn: number): string {
  const script = `import boto3, sys
c = boto3.client('sqs', endpoint_url=sys.argv[1], region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
print(c.generate_presigned_url('list_queues', Params={'QueueNamePrefix': 'signed'}, ExpiresIn=int(sys.argv[4]), HttpMethod='GET'))`;
  return execFileSync(PYTHON, ['-c', script, url, keys.accessKeyId, keys.secretAccessKey, String(expiresIn)], {
    encoding: 'utf8',
  }).trim();
}

describe('SigV4 signing, when credentials are configured', () => {
  let server: ServerProcess;
  let dir: string;
  const drivers: Driver[] = [];
  const both = async (keys: Keys) => {
    const pair = [jsonSdkDriver(server.url, client(server.url, keys)), await boto3Driver(server.url, PYTHON, keys)];
    drivers.push(...pair);
    return pair;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redrive-sigv4-'));
    const file = join(dir, 'credentials.json');
    writeFileSync(
      file,
      JSON.stringify({ [GOOD.accessKeyId]: { secretAccessKey: GOOD.secretAccessKey, accountId: ACCOUNT } }),
    );
    server = await startServerProcess({ storage: 'memory', args: ['--credentials', file] });
  });
  after(async () => {
    await Promise.all(drivers.map((d) => d.close()));
    await server.stop();
    server.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves correctly signed requests on both protocols, in the account of the key', needs('boto3'), async () => {
    for (const api of await both(GOOD)) {
      const { QueueUrl } = await api.call('CreateQueue', { QueueName: `signed-${api.protocol}` });
      assert.match(QueueUrl, new RegExp(`/${ACCOUNT}/signed-${api.protocol}$`));
      await api.call('SendMessage', { QueueUrl, MessageBody: 'signed body with spaces + plus / slash & ünïcode' });
      const r = await api.call('ReceiveMessage', { QueueUrl });
      assert.equal(r.Messages[0].Body, 'signed body with spaces + plus / slash & ünïcode');
    }
  });

  it('refuses a wrong secret and an unknown key on both protocols', needs('boto3'), async () => {
    for (const api of await both({ ...GOOD, secretAccessKey: 'wrong' }))
      await expectError(api, api.call('ListQueues'), errors.mismatch);
    for (const api of await both({ accessKeyId: 'AKIDNOBODY', secretAccessKey: 'x' }))
      await expectError(api, api.call('ListQueues'), errors.unknownKey);
  });

  it('refuses a request whose body changed after signing', async () => {
    const c = client(server.url, GOOD);
    // Same length, so Content-Length still matches what was signed.
    const tamper = (next: (args: unknown) => Promise<unknown>) => async (args: { request: { body: string } }) => {
      args.request.body = args.request.body.replace('tampered-queue', 'tampered-queuf');
      return next(args);
    };
    c.middlewareStack.addRelativeTo(tamper as never, {
      relation: 'after',
      toMiddleware: 'httpSigningMiddleware',
      name: 'tamper',
    });
    const api = jsonSdkDriver(server.url, c);
    drivers.push(api);
    await expectError(api, api.call('CreateQueue', { QueueName: 'tampered-queue' }), errors.mismatch);
  });

  it('refuses a request signed 20 minutes ago', async () => {
    const api = jsonSdkDriver(
      server.url,
      client(server.url, GOOD, { systemClockOffset: -20 * 60_000 } as Partial<SQSClientConfig>),
    );
    drivers.push(api);
    await expectError(api, api.call('ListQueues'), errors.expired);
  });

  it('accepts a presigned URL, and refuses it tampered with or expired', needs('boto3'), async () => {
    const url = presign(server.url, GOOD, 60);
    const ok = await fetch(url);
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), new RegExp(`<QueueUrl>[^<]+/${ACCOUNT}/signed-json</QueueUrl>`));
    const tampered = await fetch(url.replace('QueueNamePrefix=signed', 'QueueNamePrefix=sig'));
    assert.equal(tampered.status, 403);
    assert.match(await tampered.text(), /<Code>SignatureDoesNotMatch<\/Code>/);
    const shortLived = presign(server.url, GOOD, 1);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await fetch(shortLived);
    assert.equal(expired.status, 400);
    assert.match(await expired.text(), /<Code>RequestExpired<\/Code>/);
  });

  it('answers malformed signatures with an auth error, never a crash', async () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('AKIDGOOD', '__proto__', 'host', 'x-amz-date', '20261121', 'aws4_request', '/', ';', ',', '='),
    );
    const credential = fc.array(piece, { maxLength: 6 }).map((p) => p.join('/'));
    const request = fc.record({
      credential,
      signedHeaders: fc.array(piece, { maxLength: 4 }).map((p) => p.join(';')),
      signature: piece,
      date: fc.oneof(piece, fc.constant('20261121T000000Z')),
      expires: fc.oneof(piece, fc.nat().map(String)),
      presigned: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const enc = (s: string) => Buffer.from(s).toString('hex').replace(/../g, '%$&');
        const res = r.presigned
          ? await fetch(
              `${server.url}/?Action=ListQueues&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${enc(r.credential)}&X-Amz-Date=${enc(r.date)}&X-Amz-Expires=${enc(r.expires)}&X-Amz-SignedHeaders=${enc(r.signedHeaders)}&X-Amz-Signature=${enc(r.signature)}`,
            )
          : await fetch(`${server.url}/?Action=ListQueues`, {
              headers: {
                authorization:
                  `AWS4-HMAC-SHA256 Credential=${r.credential}, SignedHeaders=${r.signedHeaders}, Signature=${r.signature}`.replace(
                    /[^\x20-\x7e]/g,
                    '?',
                  ),
                'x-amz-date': r.date.replace(/[^\x20-\x7e]/g, '?'),
              },
            });
        const text = await res.text();
        // Past the allowance of failed checks from this address, a guess is throttled (429).
        assert.ok([400, 403, 429].includes(res.status), `${res.status} ${text}`);
        assert.match(
          text,
          /<Code>(IncompleteSignature|InvalidClientTokenId|SignatureDoesNotMatch|RequestExpired|MissingAuthenticationToken|RequestThrottled)<\/Code>/,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an unsigned request', async () => {
    const res = await fetch(`${server.url}/?Action=ListQueues`);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /<Code>MissingAuthenticationToken<\/Code>/);
  });
});

describe('without credentials configured', () => {
  let server: ServerProcess;
  before(async () => (server = await startServerProcess({ storage: 'memory' })));
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  it('takes a 12-digit access key id as the caller account and any other key as the default account', async () => {
    const cases: [string, string][] = [
      ['222222222222', '222222222222'],
      ['test', '000000000000'],
      ['1234', '000000000000'],
    ];
    for (const [accessKeyId, account] of cases) {
      const api = jsonSdkDriver(server.url, client(server.url, { accessKeyId, secretAccessKey: 'anything' }));
      const { QueueUrl } = await api.call('CreateQueue', { QueueName: 'mine' });
      assert.match(QueueUrl, new RegExp(`/${account}/mine$`));
      await api.close();
    }
  });
});
