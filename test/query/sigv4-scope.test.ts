/**
 * SigV4 as SQS checks it beyond the signature itself: the
 * credential scope names the service `sqs`, a well-formed region that is the one the host
 * names (if it names one), the date of X-Amz-Date; and the action header, when present,
 * is signed, so that a presigned or captured request cannot be replayed as another action.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { jsonRequest, send, signer, type Keys, type RawRequest } from './signed-request.js';

const GOOD: Keys = { accessKeyId: 'AKIDSCOPE', secretAccessKey: 'scope-secret' };
const mismatch = (message: string) => ({ status: 403, type: 'SignatureDoesNotMatch', message });

describe('the credential scope and the signed action header', () => {
  let server: ServerProcess;
  let dir: string;
  let host: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redrive-sigv4-scope-'));
    writeFileSync(
      join(dir, 'keys.json'),
      JSON.stringify({ [GOOD.accessKeyId]: { secretAccessKey: GOOD.secretAccessKey, accountId: '111111111111' } }),
    );
    server = await startServerProcess({ storage: 'memory', args: ['--credentials', join(dir, 'keys.json')] });
    host = new URL(server.url).host;
  });
  after(async () => {
    await server.stop();
    server.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function expectJson(req: RawRequest, expected: { status: number; type: string; message?: string }) {
    const res = await send(server.url, req);
    assert.equal(res.status, expected.status, res.text);
    const body = JSON.parse(res.text) as { __type: string; message: string };
    assert.equal(body.__type, `com.amazonaws.sqs#${expected.type}`);
    if (expected.message !== undefined) assert.equal(body.message, expected.message);
  }

  it('serves a request signed for sqs in the region the host names', async () => {
    const ok = await signer(GOOD).sign(jsonRequest(host, 'ListQueues'));
    assert.equal((await send(server.url, ok)).status, 200);
    const regional = `sqs.eu-west-1.localhost:${new URL(server.url).port}`;
    const west = await signer(GOOD, 'eu-west-1').sign(jsonRequest(regional, 'ListQueues'));
    assert.equal((await send(server.url, west)).status, 200);
  });

  it('refuses a scope for another service', async () => {
    await expectJson(
      await signer(GOOD, 'us-east-1', 's3').sign(jsonRequest(host, 'ListQueues')),
      mismatch("Credential should be scoped to correct service: 'sqs'. "),
    );
  });

  it('refuses a malformed region, and a region other than the one the host names', async () => {
    await expectJson(
      await signer(GOOD, 'US_EAST_1').sign(jsonRequest(host, 'ListQueues')),
      mismatch("Credential should be scoped to a valid region, not 'US_EAST_1'. "),
    );
    const regional = `sqs.eu-west-1.localhost:${new URL(server.url).port}`;
    await expectJson(
      await signer(GOOD, 'us-east-1').sign(jsonRequest(regional, 'ListQueues')),
      mismatch("Credential should be scoped to a valid region, not 'us-east-1'. "),
    );
  });

  it('refuses a scope date that is not the date of X-Amz-Date', async () => {
    const signed = await signer(GOOD).sign(jsonRequest(host, 'ListQueues'));
    const amzDate = signed.headers['x-amz-date']!;
    signed.headers.authorization = signed.headers.authorization!.replace(`/${amzDate.slice(0, 8)}/`, '/20010101/');
    await expectJson(
      signed,
      mismatch(
        `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20010101' != '${amzDate.slice(0, 8)}', from '${amzDate}'. `,
      ),
    );
  });

  it('refuses an X-Amz-Target header that the signature does not cover', async () => {
    const unsigned = await signer(GOOD).sign(jsonRequest(host, 'ListQueues'), {
      unsignableHeaders: new Set(['x-amz-target']),
    });
    assert.ok(!unsigned.headers.authorization!.includes('x-amz-target'));
    await expectJson(unsigned, {
      status: 400,
      type: 'IncompleteSignature',
      message: 'The X-Amz-Target header must be signed.',
    });
  });

  it('a presigned POST cannot be replayed as another action', async () => {
    // Signed over the body `{}` with no action: the action header is added afterwards.
    const { 'x-amz-target': _, ...headers } = jsonRequest(host, 'ListQueues').headers;
    const presigned = await signer(GOOD).presign({ ...jsonRequest(host, 'ListQueues'), headers }, { expiresIn: 300 });
    await expectJson(
      { ...presigned, headers: { ...presigned.headers, 'x-amz-target': 'AmazonSQS.CreateQueue' } },
      { status: 400, type: 'IncompleteSignature' },
    );
    const listed = await send(server.url, {
      ...presigned,
      headers: { ...presigned.headers, 'x-amz-target': 'AmazonSQS.ListQueues' },
    });
    assert.equal(listed.status, 400, 'not even the action it was meant for, unless signed');
    // Presigned with the action signed, it works for that action only.
    const bound = await signer(GOOD).presign(jsonRequest(host, 'ListQueues'), {
      expiresIn: 300,
      unhoistableHeaders: new Set(['x-amz-target']),
    });
    assert.equal((await send(server.url, bound)).status, 200);
    await expectJson(
      { ...bound, headers: { ...bound.headers, 'x-amz-target': 'AmazonSQS.CreateQueue' } },
      { status: 403, type: 'SignatureDoesNotMatch' },
    );
  });
});
