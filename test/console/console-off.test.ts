/** `--console off`: nothing under /console, and the API is unchanged. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

let server: ServerProcess;
useServerProcess({ storage: 'memory', args: ['--console', 'off'] }, (s) => (server = s));

test('--console off answers 404 for every console path and still serves the API', async () => {
  for (const [method, path] of [
    ['GET', '/console'],
    ['GET', '/console/'],
    ['GET', '/console/queues'],
    ['GET', '/console/assets/console.css'],
    ['POST', '/console/api'],
    ['GET', '/console/sign-in'],
  ]) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      redirect: 'manual',
      headers: { 'x-amz-target': 'AmazonSQS.ListQueues' },
      body: method === 'POST' ? '{}' : undefined,
    });
    assert.equal(res.status, 404, `${method} ${path}`);
  }
  const res = await fetch(`${server.url}/`, {
    method: 'POST',
    headers: { 'x-amz-target': 'AmazonSQS.ListQueues', 'content-type': 'application/x-amz-json-1.0' },
    body: '{}',
  });
  assert.equal(res.status, 200);
  assert.doesNotMatch(server.output(), /console (open|at)/);
});

test('with the console on, its pages and assets are served (the control for the test above)', async () => {
  // Served by the same build: the stylesheet and scripts ship with the package.
  const { startServerProcess } = await import('../support/server-process.js');
  const on = await startServerProcess({ storage: 'memory' });
  try {
    for (const path of [
      '/console/',
      '/console/assets/console.css',
      '/console/assets/js/main.js',
      '/console/assets/favicon.svg',
      '/console/wire/move-tasks.js',
    ]) {
      const res = await fetch(`${on.url}${path}`);
      assert.equal(res.status, 200, path);
    }
    // The wire types the pages import, and nothing of the CLI or of the wire's sources.
    for (const path of [
      '/console/cli/command-kit.js',
      '/console/cli/dlq-format.js',
      '/console/wire/move-tasks.ts',
      '/console/wire/../cli/index.js',
    ]) {
      assert.equal((await fetch(`${on.url}${path}`)).status, 404, path);
    }
    const page = await (await fetch(`${on.url}/console/queues`)).text();
    assert.doesNotMatch(page, /https?:\/\/(?!127\.0\.0\.1)[a-z]/i, 'no asset from another host');
  } finally {
    await on.stop();
    on.cleanup();
  }
});

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

test('a browser opening the root is told the console is off; SDK-shaped requests get SQS answers', async () => {
  const res = await fetch(`${server.url}/`, { headers: BROWSER, redirect: 'manual' });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/html/);
  assert.match(await res.text(), /console is off on this server; start it with <code>--console on<\/code>/);
  // No Accept: text/html, or a parameter, or a POST: SQS's own answer, unchanged.
  for (const [path, init] of [
    ['/', {}],
    ['/?Action=ListQueues', { headers: BROWSER }],
    ['/', { method: 'POST', headers: BROWSER }],
  ] as const) {
    const sqs = await fetch(`${server.url}${path}`, init);
    assert.notEqual(sqs.headers.get('content-type'), 'text/html; charset=utf-8', `${path} ${JSON.stringify(init)}`);
    await sqs.text();
  }
  const bare = await fetch(`${server.url}/`);
  assert.equal(bare.status, 404);
  assert.equal(await bare.text(), '<?xml version="1.0"?><UnknownOperationException/>');
});

test('with the console on, a browser opening the root is sent to it', async () => {
  const { startServerProcess } = await import('../support/server-process.js');
  const on = await startServerProcess({ storage: 'memory' });
  try {
    const res = await fetch(`${on.url}/`, { headers: BROWSER, redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/console/');
  } finally {
    await on.stop();
    on.cleanup();
  }
});
