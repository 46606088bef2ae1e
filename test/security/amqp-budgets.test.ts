/**
 * AMQP work budgets between tenants (docs/security.md, "Limits of the AMQP port"): the
 * attacker account spends what one connection, one publish or one account may hold, and is
 * refused with RabbitMQ's error, while the bystander's SQS client keeps being served and
 * the server's memory stays within the documented budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { methodFrame } from '../../src/protocols/amqp/frames.js';
import { RawClient, rawFrame } from '../amqp/raw-client.js';
import { assertServed, startTenants, TENANTS, type TenantServer } from '../support/hostile-tenant.js';
import { pause } from '../amqp/support.js';

const MiB = 1 << 20;

/**
 * A content header whose `headers` table holds one array of `voids` one-byte voids: about
 * 50 times its size once decoded. It announces a 1-byte body that never comes.
 */
function voidsHeader(channel: number, voids: number): Buffer {
  const payload = Buffer.alloc(voids + 25);
  let at = payload.writeUInt16BE(60, 0);
  at = payload.writeUInt16BE(0, at);
  at = payload.writeBigUInt64BE(1n, at);
  at = payload.writeUInt16BE(0x2000, at); // the headers property only
  at = payload.writeUInt32BE(payload.length - at - 4, at);
  at = payload.writeUInt8(1, at);
  at = payload.writeUInt8(0x68, at); // the key `h`
  at = payload.writeUInt8(0x41, at); // an array (`A`)
  at = payload.writeUInt32BE(payload.length - at - 4, at);
  payload.fill('V', at);
  return rawFrame(2, channel, payload);
}

const attacker = TENANTS.attacker;

/**
 * Runs `attack` while the bystander's probe runs (for at least `minMs`, so the probe makes
 * enough calls to judge), asserts the bystander was served, and returns the attack's result.
 */
async function whileServed<T>(t: TenantServer, what: string, attack: () => Promise<T>, minMs = 1500): Promise<T> {
  const probe = await t.probe();
  const started = Date.now();
  const result = await attack();
  await pause(Math.max(0, minMs - (Date.now() - started)));
  assertServed(await probe.stop(), what);
  return result;
}

/** Signs in as the attacker; its raw frames go over it. */
const attackerConnection = (t: TenantServer) =>
  RawClient.signedIn(t.amqpPort!, attacker.accessKeyId, attacker.secretAccessKey);

/**
 * Sends `headers` unfinished publishes (each a header of `voids` voids) on channels 2..,
 * then returns the first close the server answers with.
 */
async function unfinishedHeaders(
  t: TenantServer,
  headers: number,
  voids: number,
): Promise<{ code?: number; text?: string }> {
  const c = await attackerConnection(t);
  try {
    for (let n = 2; n < 2 + headers; n++) {
      c.write(methodFrame(n, 'channel.open'));
      c.write(methodFrame(n, 'basic.publish', { exchange: '', routingKey: 'nowhere' }));
      c.write(voidsHeader(n, voids));
    }
    for (;;) {
      const a = await c.answer(10_000);
      if (a.kind === 'channel.open-ok') continue;
      return { code: a.code, text: a.text ?? a.kind };
    }
  } finally {
    c.close();
  }
}

describe('AMQP budgets between tenants', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({
      amqp: true,
      args: ['--amqp-max-unfinished-bytes', String(2 * MiB), '--amqp-max-unfinished-bytes-total', String(8 * MiB)],
    });
  });
  after(() => t.stop());

  test('unfinished publishes with large header tables: 25 MiB of void arrays is refused with 506, memory stays in budget', async () => {
    const before = t.rss();
    // 4 rounds of 2 connections, 400 headers of 8,000 voids each: 25 MiB on the wire, 1.3 GB if decoded and held.
    const answers = await whileServed(t, 'unfinished publishes with large header tables', async () => {
      const all = [];
      for (let round = 0; round < 4; round++)
        all.push(...(await Promise.all([unfinishedHeaders(t, 400, 8000), unfinishedHeaders(t, 400, 8000)])));
      return all;
    });
    for (const a of answers) {
      assert.equal(a.code, 506, `refused with RESOURCE_ERROR: ${JSON.stringify(a)}`);
      assert.match(a.text ?? '', /RESOURCE_ERROR - unfinished messages on (this connection|the server) exceed/);
    }
    const grew = t.rss() - before;
    console.log(`RSS grew by ${(grew / MiB).toFixed(0)} MiB`);
    assert.ok(grew < 8 * MiB + 64 * MiB, `the server's memory grew by ${(grew / MiB).toFixed(0)} MiB`);
  });

  test('a content header whose tables would be too large decoded is refused before decoding: 406 on its channel', async () => {
    const c = await attackerConnection(t);
    try {
      c.write(methodFrame(1, 'basic.publish', { exchange: '', routingKey: 'nowhere' }));
      c.write(voidsHeader(1, 131_072 - 8 - 25)); // a whole frame of voids
      const a = await c.answer();
      assert.deepEqual([a.kind, a.code], ['channel.close', 406], JSON.stringify(a));
      assert.match(
        a.text ?? '',
        /PRECONDITION_FAILED - content header tables would take more than 524288 bytes decoded/,
      );
    } finally {
      c.close();
    }
  });
});
