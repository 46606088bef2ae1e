/**
 * Runtime policies through the management API (/api/policies, RabbitMQ's shape): create,
 * replace, list, read, delete, the errors, basic auth, persistence across a restart, and
 * the policy taking effect on an AMQP queue at once and leaving it when deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import amqp from 'amqplib';
import { GUEST } from './policy-control.js';
import { pause, startAmqpServer, type AmqpServer } from './support.js';

describe('management API: policies', () => {
  let redrive: AmqpServer;
  /** The first server owns the data directory, which the restarts reuse. */
  let first: AmqpServer;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${redrive.server.url}/api/${path}`, {
      ...init,
      headers: { authorization: GUEST, 'content-type': 'application/json', ...init.headers },
    });
  const put = (name: string, body: unknown) =>
    api(`policies/%2F/${name}`, { method: 'PUT', body: JSON.stringify(body) });

  before(async () => {
    redrive = first = await startAmqpServer();
  });

  after(async () => {
    await redrive?.server.stop();
    first?.server.cleanup();
  });

  test("PUT creates (201) and replaces (204); GET lists and reads in RabbitMQ's shape; DELETE removes", async () => {
    const body = {
      pattern: '^mgmt-',
      definition: { 'dead-letter-exchange': 'dlx', 'message-ttl': 1500 },
      priority: 2,
      'apply-to': 'queues',
    };
    assert.equal((await put('dlx-all', body)).status, 201);
    assert.equal((await put('dlx-all', { ...body, priority: 3 })).status, 204);
    const one = await (await api('policies/%2F/dlx-all')).json();
    assert.deepEqual(one, {
      vhost: '/',
      name: 'dlx-all',
      pattern: '^mgmt-',
      'apply-to': 'queues',
      definition: body.definition,
      priority: 3,
    });
    assert.deepEqual(await (await api('policies')).json(), [one]);
    assert.deepEqual(await (await api('policies/%2F')).json(), [one]);
    assert.equal((await api('policies/%2F/dlx-all', { method: 'DELETE' })).status, 204);
    assert.equal((await api('policies/%2F/dlx-all', { method: 'DELETE' })).status, 404);
    assert.equal((await api('policies/%2F/dlx-all')).status, 404);
    assert.deepEqual(await (await api('policies')).json(), []);
  });

  test("bad bodies are 400 with RabbitMQ's bad_request, and nothing is stored", async () => {
    const cases: [unknown, RegExp][] = [
      [{ definition: { 'max-length': 1 } }, /pattern is required/],
      [{ pattern: '(', definition: { 'max-length': 1 } }, /not a valid regular expression/],
      [{ pattern: '.*', definition: { 'ha-mode': 'all' } }, /\[<<"ha-mode">>\] are not recognised policy settings/],
      [{ pattern: '.*', definition: { 'max-length': -1 } }, /not a valid value for max-length/],
      [{ pattern: '.*', definition: { overflow: 'drop-tail' } }, /not a valid value for overflow/],
      [{ pattern: '.*', definition: {} }, /definition must be a non-empty object/],
      [{ pattern: '.*', definition: { 'dead-letter-routing-key': 'k' } }, /requires dead-letter-exchange/],
    ];
    for (const [body, reason] of cases) {
      const res = await put('bad', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const answer = (await res.json()) as { error: string; reason: string };
      assert.equal(answer.error, 'bad_request');
      assert.match(answer.reason, reason);
    }
    const notJson = await api('policies/%2F/bad', { method: 'PUT', body: '{' });
    assert.equal(notJson.status, 400);
    assert.equal((await api('policies/%2F/bad')).status, 404);
  });

  test('sign-in: no or wrong credentials are 401; other virtual hosts are 404', async () => {
    assert.equal((await fetch(`${redrive.server.url}/api/policies`)).status, 401);
    const wrong = `Basic ${Buffer.from('guest:nope').toString('base64')}`;
    assert.equal(
      (await fetch(`${redrive.server.url}/api/policies`, { headers: { authorization: wrong } })).status,
      401,
    );
    assert.equal((await api('policies/other/p')).status, 404);
  });

  test('a policy applies to matching AMQP queues at once and stops applying when deleted', async () => {
    const conn = await amqp.connect(redrive.url);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('live-q');
    assert.equal((await put('live', { pattern: '^live-', definition: { 'max-length': 1 } })).status, 201);
    for (const b of ['1', '2', '3']) ch.sendToQueue('live-q', Buffer.from(b));
    await ch.waitForConfirms();
    assert.equal((await ch.checkQueue('live-q')).messageCount, 1, 'drop-head to one message');
    assert.equal((await api('policies/%2F/live', { method: 'DELETE' })).status, 204);
    for (const b of ['4', '5']) ch.sendToQueue('live-q', Buffer.from(b));
    await ch.waitForConfirms();
    assert.equal((await ch.checkQueue('live-q')).messageCount, 3);
    await conn.close();
  });

  test('policies are stored: they survive a restart', async () => {
    assert.equal((await put('kept', { pattern: '^kept-', definition: { 'max-length': 2 } })).status, 201);
    await redrive.server.stop();
    const again = await startAmqpServer({ dataDir: redrive.server.dataDir });
    try {
      const res = await fetch(`${again.server.url}/api/policies/%2F/kept`, { headers: { authorization: GUEST } });
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as { definition: unknown }).definition, { 'max-length': 2 });
      const conn = await amqp.connect(again.url);
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue('kept-q');
      for (const b of ['1', '2', '3']) ch.sendToQueue('kept-q', Buffer.from(b));
      await ch.waitForConfirms();
      await pause(50);
      assert.equal((await ch.checkQueue('kept-q')).messageCount, 2, 'the stored policy is in force after the restart');
      await conn.close();
    } finally {
      await again.server.stop();
    }
    redrive = await startAmqpServer({ dataDir: redrive.server.dataDir });
  });
});
