import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConsoleRoutes } from '../../src/console/console-routes.js';
import type { MetricsEndpoint } from '../../src/metrics/metrics-endpoint.js';
import type { WireRequest } from '../../src/protocols/wire.js';
import type { ManagementApi } from '../../src/server/management-api.js';
import { mountOf, mountTable, type Mounted } from '../../src/server/mount-table.js';
import { Readiness } from '../../src/server/readiness.js';
import { SqsApp, type SqsBackend } from '../../src/server/sqs-app.js';

const sqs = new SqsApp({} as SqsBackend, {
  accountId: '000000000000',
  region: 'us-east-1',
  host: '127.0.0.1',
  port: 9324,
});
const readiness = new Readiness({ maintenance: { ready: async () => {} } });
const everything: Mounted = {
  sqs,
  readiness,
  console: {} as ConsoleRoutes,
  management: {} as ManagementApi,
  metrics: {} as MetricsEndpoint,
};

const req = (method: string, url: string, headers: Record<string, string> = {}): WireRequest => {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  return { method, path, query, headers, body: Buffer.alloc(0) };
};
const served = (m: Mounted, r: WireRequest) => mountOf(mountTable(m), r).name;

test('each path goes to its sub-application; the SQS API takes the rest', () => {
  const html = { accept: 'text/html,application/xhtml+xml' };
  const cases: Array<[WireRequest, string]> = [
    [req('GET', '/console'), 'console'],
    [req('POST', '/console/api'), 'console'],
    [req('GET', '/consoles'), 'sqs'],
    [req('PUT', '/api/policies/%2F/p'), 'management'],
    [req('GET', '/health'), 'health'],
    [req('HEAD', '/ready'), 'health'],
    [req('POST', '/health'), 'sqs'],
    [req('POST', '/ready'), 'sqs'],
    [req('GET', '/metrics?x=1'), 'metrics'],
    [req('GET', '/', html), 'landing'],
    [req('GET', '/?Action=ListQueues', html), 'sqs'],
    [req('GET', '/'), 'sqs'],
    [req('POST', '/'), 'sqs'],
    [req('POST', '/000000000000/orders'), 'sqs'],
    [req('POST', '/_redrive/clock'), 'sqs'],
  ];
  for (const [r, name] of cases) assert.equal(served(everything, r), name, `${r.method} ${r.path}?${r.query}`);
});

test("without the management API or metrics their paths are the SQS API's; without the console, its paths answer 404", async () => {
  const bare: Mounted = { sqs, readiness };
  assert.equal(served(bare, req('GET', '/api/policies')), 'sqs');
  assert.equal(served(bare, req('GET', '/metrics')), 'sqs');
  const consoleOff = mountOf(mountTable(bare), req('GET', '/console/'));
  assert.equal(consoleOff.name, 'console');
  const answer = await consoleOff.handle(req('GET', '/console/'), {
    requestId: 'r',
    client: '127.0.0.1',
    cancelled: { aborted: false, addEventListener() {}, removeEventListener() {} },
  });
  assert.deepEqual([answer.status, answer.body], [404, 'Not found']);
});

test("the guard's rules and the shape of refusals follow the sub-application", () => {
  const table = mountTable(everything);
  const of = (name: string) => table.find((a) => a.name === name)!;
  assert.deepEqual(
    table.map((a) => [a.name, a.area]),
    [
      ['console', 'console'],
      ['management', 'api'],
      ['health', 'probe'],
      ['metrics', 'api'],
      ['landing', 'sqs'],
      ['sqs', 'sqs'],
    ],
  );
  const r = req('GET', '/x');
  assert.deepEqual(JSON.parse(of('management').errors.refusal('no', r, 'id').body), {
    error: 'not_authorized',
    reason: 'no',
  });
  assert.equal(of('console').errors.refusal('no', r, 'id').headers['content-type'], 'text/plain; charset=utf-8');
  const sqsRefusal = of('sqs').errors.refusal('no', req('POST', '/', { 'x-amz-target': 'AmazonSQS.ListQueues' }), 'id');
  assert.deepEqual([sqsRefusal.status, JSON.parse(sqsRefusal.body).__type], [403, 'com.amazonaws.sqs#AccessDenied']);
});
