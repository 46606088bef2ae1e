/**
 * Failed SigV4 authentication is throttled per client address and per access key: past
 * the allowance a guess is answered at once with 429
 * RequestThrottled and Retry-After, in the protocol's shape, even when it is right; a
 * good client from another address keeps being served. With --trust-proxy the address is
 * X-Forwarded-For's; without, X-Forwarded-For is ignored.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { jsonRequest, send, signer, type Keys, type RawResponse } from './signed-request.js';

const GOOD: Keys = { accessKeyId: 'AKIDTHROTTLE', secretAccessKey: 'throttle-secret' };
const WRONG: Keys = { ...GOOD, secretAccessKey: 'a-guess' };
/** Failures in a row checked before the first wait (docs/security.md). */
const FREE = 10;

const dir = mkdtempSync(join(tmpdir(), 'redrive-sigv4-throttle-'));
const keys = join(dir, 'keys.json');
writeFileSync(
  keys,
  JSON.stringify({ [GOOD.accessKeyId]: { secretAccessKey: GOOD.secretAccessKey, accountId: '111111111111' } }),
);
after(() => rmSync(dir, { recursive: true, force: true }));

async function attempt(server: ServerProcess, k: Keys, from?: string, action = 'ListQueues'): Promise<RawResponse> {
  const req = await signer(k).sign(jsonRequest(new URL(server.url).host, action));
  return send(server.url, req, from ? { 'x-forwarded-for': from } : {});
}

const typeOf = (r: RawResponse) =>
  (JSON.parse(r.text) as { __type?: string }).__type?.replace('com.amazonaws.sqs#', '');

describe('behind a trusted proxy', () => {
  let server: ServerProcess;
  // The throttle runs on the server's clock: a manual one, never moved, keeps the waits from
  // running out on a slow machine. Signatures are checked against the wall clock.
  before(
    async () =>
      (server = await startServerProcess({
        storage: 'memory',
        manualClock: true,
        args: ['--credentials', keys, '--trust-proxy', '127.0.0.1'],
      })),
  );
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  it('answers guesses past the allowance at once with 429 RequestThrottled, even a right one', async () => {
    const attacker = '203.0.113.7';
    for (let i = 0; i < FREE; i++)
      assert.equal(typeOf(await attempt(server, WRONG, attacker)), 'SignatureDoesNotMatch', `guess ${i + 1}`);
    await attempt(server, WRONG, attacker);
    const throttled = await attempt(server, WRONG, attacker);
    assert.equal(throttled.status, 429);
    assert.equal(typeOf(throttled), 'RequestThrottled');
    assert.equal(throttled.headers['x-amzn-query-error'], 'RequestThrottled;Sender');
    assert.ok(Number(throttled.headers['retry-after']) >= 1, `Retry-After: ${throttled.headers['retry-after']}`);
    assert.equal(
      (await attempt(server, GOOD, attacker)).status,
      429,
      'a right guess from the throttled address is not checked',
    );
    // The Query protocol gets its own shape.
    const query = await fetch(`${server.url}/?Action=ListQueues&Version=2012-11-05`, {
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=AKIDNOBODY/${amzDate().slice(0, 8)}/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`,
        'x-amz-date': amzDate(),
        'x-forwarded-for': attacker,
      },
    });
    assert.equal(query.status, 429);
    assert.match(await query.text(), /<Code>RequestThrottled<\/Code>/);
  });

  it('parallel guesses gain nothing', async () => {
    // A key of its own: the key guessed above would hold this address back after one failure.
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        attempt(server, { accessKeyId: 'AKIDNOSUCH', secretAccessKey: 'x' }, '203.0.113.8'),
      ),
    );
    const checked = results.filter((r) => r.status === 403).length;
    assert.equal(checked, FREE + 1, 'the allowance and the failure that sets the first wait');
    assert.equal(results.filter((r) => r.status === 429).length, 200 - checked);
  });

  it('serves the key’s owner from another address, and a good SDK client', async () => {
    // The key itself is past its allowance now, but this address has no failure.
    assert.equal((await attempt(server, GOOD, '198.51.100.20')).status, 200);
    const sdk = new SQSClient({ endpoint: server.url, region: 'us-east-1', credentials: GOOD, maxAttempts: 1 });
    await sdk.send(new ListQueuesCommand({}));
    sdk.destroy();
  });
});

describe('without --trust-proxy', () => {
  let server: ServerProcess;
  before(
    async () =>
      (server = await startServerProcess({ storage: 'memory', manualClock: true, args: ['--credentials', keys] })),
  );
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  it('ignores X-Forwarded-For: a client cannot pick a fresh address per guess', async () => {
    const statuses = [];
    for (let i = 0; i < FREE + 3; i++) statuses.push((await attempt(server, WRONG, `192.0.2.${i}`)).status);
    assert.deepEqual(statuses.slice(0, FREE), Array(FREE).fill(403));
    assert.equal(statuses.at(-1), 429);
  });
});

function amzDate(): string {
  return new Date().toISOString().replace(/[-:]|\.\d+/g, '');
}
