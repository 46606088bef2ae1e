/**
 * Open mode (no --credentials) on a developer's laptop: a web page
 * the operator visits must not drive the API, and DNS rebinding must not reach it. The
 * rules are src/server/request-guard.ts's, documented in docs/security.md. Raw HTTP
 * checks each rule; a real Chromium then runs the attacks a hostile page would.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, useServerProcess, type ServerProcess } from '../support/server-process.js';
import { browserMissing, launchBrowser, logMatch } from '../console/browser.js';
import { counts, createQueue, SDK_HEADER } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;
let queueUrl: string;
let port: number;

useServerProcess({ storage: 'memory', args: ['--allowed-hosts', 'queue.internal,.corp.example'] }, async (s) => {
  server = s;
  sqs = s.client();
  queueUrl = await createQueue(sqs, 'precious');
  port = Number(new URL(s.url).port);
});

/** A raw request with headers of our choosing (fetch sets its own Host and Sec-Fetch-*). */
function send(opts: {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  to?: number;
}): Promise<{ status: number; text: string; code?: string }> {
  const to = opts.to ?? port;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: to,
        method: opts.method ?? 'GET',
        path: opts.path ?? '/',
        headers: { host: `127.0.0.1:${to}`, ...opts.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            text,
            code: String(res.headers['x-amzn-query-error'] ?? '').split(';')[0] || undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const form = (params: Record<string, string>) => new URLSearchParams({ Version: '2012-11-05', ...params }).toString();
const FORM = 'application/x-www-form-urlencoded';

describe('the Host header must name this server (DNS rebinding)', () => {
  test('IP addresses, localhost and its subdomains, and --allowed-hosts names are served; other names get 403 AccessDenied', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      `10.1.2.3:${port}`,
      `localhost:${port}`,
      `sqs.us-west-2.localhost:${port}`,
      'queue.internal',
      `a.corp.example:${port}`,
      'corp.example',
      'LOCALHOST.',
    ]) {
      const r = await send({ path: '/?Action=ListQueues', headers: { host } });
      assert.equal(r.status, 200, `${host}: ${r.text}`);
    }
    for (const host of [`evil.example:${port}`, 'evilcorp.example', 'queue.internal.evil.example', 'a:b:c']) {
      const r = await send({ path: '/?Action=ListQueues', headers: { host } });
      assert.equal(r.status, 403, host);
      assert.equal(r.code, 'AccessDenied');
      assert.match(r.text, /does not name this server: start it with --allowed-hosts/);
    }
    // Each part of the server refuses in its own shape; the probes answer any name.
    const json = await send({
      method: 'POST',
      headers: {
        host: 'evil.example',
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'AmazonSQS.ListQueues',
      },
      body: '{}',
    });
    assert.equal(json.status, 403);
    assert.equal(JSON.parse(json.text).__type, 'com.amazonaws.sqs#AccessDenied');
    const api = await send({
      path: '/api/policies',
      headers: { host: 'evil.example', authorization: 'Basic Z3Vlc3Q6Z3Vlc3Q=' },
    });
    assert.deepEqual([api.status, JSON.parse(api.text).error], [403, 'not_authorized']);
    assert.equal((await send({ path: '/console/', headers: { host: 'evil.example' } })).status, 403);
    assert.equal((await send({ path: '/health', headers: { host: 'evil.example' } })).status, 200);
  });

  test('only GET and HEAD of /health and /ready answer any name: an SQS action posted to them is guarded like any other', async () => {
    for (const path of ['/health', '/ready']) {
      assert.equal(
        (await send({ method: 'HEAD', path, headers: { host: 'evil.example' } })).status,
        200,
        `HEAD ${path}`,
      );
      const rebound = await send({
        method: 'POST',
        path,
        headers: {
          host: 'evil.example',
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'AmazonSQS.CreateQueue',
        },
        body: JSON.stringify({ QueueName: 'rebound' }),
      });
      assert.equal(rebound.status, 403, `POST ${path}: ${rebound.text}`);
      assert.equal(JSON.parse(rebound.text).__type, 'com.amazonaws.sqs#AccessDenied');
      const crossSite = await send({
        method: 'POST',
        path,
        headers: { 'sec-fetch-site': 'cross-site', 'content-type': FORM },
        body: form({ Action: 'CreateQueue', QueueName: 'rebound' }),
      });
      assert.deepEqual([crossSite.status, crossSite.code], [403, 'AccessDenied'], `cross-site POST ${path}`);
    }
    await assert.rejects(sqs.send(new GetQueueUrlCommand({ QueueName: 'rebound' })), { name: 'QueueDoesNotExist' });
  });
});

describe('requests a web page could send are refused', () => {
  test("another Origin, or Sec-Fetch-Site cross-site or same-site: 403 AccessDenied; this server's own origin is served", async () => {
    for (const headers of [
      { origin: 'http://127.0.0.1:8000' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      const r = await send({ path: '/?Action=ListQueues', headers });
      assert.deepEqual([r.status, r.code], [403, 'AccessDenied'], JSON.stringify(headers));
    }
    for (const headers of [
      { origin: `http://127.0.0.1:${port}` },
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
    ] as Record<string, string>[]) {
      assert.equal((await send({ path: '/?Action=ListQueues', headers })).status, 200, JSON.stringify(headers));
    }
  });

  test('an unsigned form body without an SDK header is refused; signed, SDK-sent or JSON requests are served', async () => {
    const body = form({ Action: 'GetQueueUrl', QueueName: 'precious' });
    for (const type of [FORM, 'multipart/form-data; boundary=x', 'text/plain', 'TEXT/PLAIN;charset=UTF-8']) {
      const r = await send({ method: 'POST', headers: { 'content-type': type, 'user-agent': 'Mozilla/5.0' }, body });
      assert.deepEqual([r.status, r.code], [403, 'AccessDenied'], type);
      assert.match(r.text, /An unsigned form request without an AWS SDK header is refused/);
    }
    // A presigned URL's signature can be written into a form's action: it does not count.
    assert.equal(
      (await send({ method: 'POST', path: '/?X-Amz-Signature=forged', headers: { 'content-type': FORM }, body }))
        .status,
      403,
    );
    const served: Record<string, string>[] = [
      {
        'user-agent':
          'aws-cli/2.9.19 Python/3.11.2 Linux/6.1 source/x86_64.debian.12 prompt/off command/sqs.get-queue-url',
      },
      { 'user-agent': 'Boto3/1.26.27 Python/3.11.2 Linux/6.1 Botocore/1.29.27' },
      { 'user-agent': 'Botocore/1.29.27' },
      { 'user-agent': 'aws-sdk-java/2.20.0' },
      {
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00',
      },
      SDK_HEADER,
      { 'amz-sdk-request': 'attempt=1; max=3' },
    ];
    for (const headers of served) {
      const r = await send({ method: 'POST', headers: { 'content-type': FORM, ...headers }, body });
      assert.equal(r.status, 200, `${JSON.stringify(headers)}: ${r.text}`);
    }
    // A GET that names the action in its query (curl, a browser's address bar) has no form body.
    assert.equal((await send({ path: `/?Action=GetQueueUrl&QueueName=precious` })).status, 200);
    const json = await send({
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.GetQueueUrl' },
      body: '{"QueueName":"precious"}',
    });
    assert.equal(json.status, 200);
    await sqs.send(new GetQueueUrlCommand({ QueueName: 'precious' }));
  });
});

describe('with --credentials the Host header is checked only when --allowed-hosts is given', () => {
  const started: ServerProcess[] = [];
  after(async () => {
    for (const s of started) {
      await s.stop();
      s.cleanup();
    }
  });

  test('without it any name gets the signature refusal; with it an unknown name gets the Host one; no cross-site rule', async () => {
    const credentials = { AKIDOPEN: { secretAccessKey: 's', accountId: '111111111111' } };
    const [any, named] = await Promise.all([
      startServerProcess({ storage: 'memory', credentials }),
      startServerProcess({ storage: 'memory', credentials, args: ['--allowed-hosts', 'queue.internal'] }),
    ]);
    started.push(any, named);
    const portOf = (s: ServerProcess) => Number(new URL(s.url).port);
    const crossSite = { origin: 'http://elsewhere.example', 'sec-fetch-site': 'cross-site', 'content-type': FORM };
    const unsigned = await send({
      to: portOf(any),
      method: 'POST',
      headers: { host: 'evil.example', ...crossSite },
      body: form({ Action: 'ListQueues' }),
    });
    assert.deepEqual([unsigned.status, unsigned.code], [403, 'MissingAuthenticationToken'], unsigned.text);
    const refusedHost = await send({
      to: portOf(named),
      path: '/?Action=ListQueues',
      headers: { host: 'evil.example' },
    });
    assert.deepEqual([refusedHost.status, refusedHost.code], [403, 'AccessDenied']);
    assert.match(refusedHost.text, /does not name this server/);
    const allowed = await send({
      to: portOf(named),
      path: '/?Action=ListQueues',
      headers: { host: 'queue.internal', ...crossSite },
    });
    assert.deepEqual([allowed.status, allowed.code], [403, 'MissingAuthenticationToken'], allowed.text);
  });
});

describe('in Chromium, a page on another origin cannot change anything', { skip: browserMissing() }, () => {
  let attacker: Server;
  let attackerPort: number;
  const page = () => {
    const target = `http://127.0.0.1:${port}/`;
    const q = encodeURIComponent(queueUrl);
    return `<!doctype html><title>cat pictures</title>
<script>
  const seen = new Set();
  function done(what) { seen.add(what); if (seen.size === 3) document.title = 'done'; }
</script>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${target}" target="sink">
  <input name="Action" value="DeleteQueue"><input name="QueueUrl" value="${queueUrl}"><input name="Version" value="2012-11-05">
</form>
<script>
  const img = new Image();
  img.onload = img.onerror = () => done('img');
  img.src = '${target}?Action=SendMessage&QueueUrl=${q}&MessageBody=from-img';
  document.querySelector('iframe').onload = () => done('form');
  document.getElementById('f').submit();
  fetch('${target}', { method: 'POST', mode: 'no-cors', headers: { 'content-type': '${FORM}' },
    body: 'Action=SendMessage&Version=2012-11-05&QueueUrl=${q}&MessageBody=from-fetch' }).finally(() => done('fetch'));
</script>`;
  };
  before(async () => {
    attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page()));
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    attackerPort = (attacker.address() as AddressInfo).port;
  });
  after(() => attacker?.close());

  test('an <img> SendMessage, an auto-submitted form DeleteQueue and a no-cors fetch, same-site and cross-site; DNS rebinding is refused', async () => {
    const browser = await launchBrowser([
      `--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1`,
    ]);
    try {
      for (const origin of [`http://127.0.0.1:${attackerPort}`, `http://attacker.test:${attackerPort}`]) {
        const tab = await browser.newPage();
        await tab.goto(`${origin}/`);
        await tab.waitForFunction(() => document.title === 'done', undefined, { timeout: 10_000 });
        await tab.close();
      }
      // The requests reached the server and were refused there (not merely blocked by the browser).
      await logMatch(server.output, /(Requests from another site are refused[\s\S]*){6}/);
      assert.ok(
        (server.output().match(/Requests from another site are refused/g) ?? []).length >= 6,
        server.output().slice(-3000),
      );
      // A page whose name re-resolves to 127.0.0.1 is same-origin for the browser, but not for the server.
      const tab = await browser.newPage();
      const answer = await tab.goto(`http://rebind.test:${port}/?Action=ListQueues`);
      assert.equal(answer?.status(), 403);
      assert.match(await tab.content(), /does not name this server/);
    } finally {
      await browser.close();
    }
    assert.deepEqual(await counts(sqs, queueUrl), { visible: 0, inflight: 0, delayed: 0 }, 'nothing sent');
    await sqs.send(new GetQueueUrlCommand({ QueueName: 'precious' }));
  });
});
