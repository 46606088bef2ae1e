/**
 * What a client can hold before anyone knows who it is (src/server/admission.ts): slow
 * senders from one address take only that address's share of the door, and a body of
 * one-byte chunks costs the server what it sent, while another account on another address
 * keeps being served. Every attack is bounded in count and time, on loopback only.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { assertServed, startTenants, type TenantServer } from '../support/hostile-tenant.js';
import { openFileLimit } from '../support/server-process.js';

const ATTACKER_ADDRESS = '127.0.0.2';

interface Raw {
  socket: Socket;
  /** What the server answered so far. */
  answer(): string;
  /** Settles when the server (or the test) closes the connection. */
  closed: Promise<void>;
}

/** A raw connection from `localAddress`; never throws (a reset is just a close). */
function raw(t: TenantServer, localAddress: string): Promise<Raw> {
  const { hostname, port } = new URL(t.server.url);
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    const done = () => resolve({ socket, answer: () => text, closed });
    socket.once('connect', done);
    socket.once('close', done);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('slow senders from one address, under a small open-file limit', () => {
  let t: TenantServer;
  const prefix = openFileLimit(1024);
  before(async () => {
    t = await startTenants({
      storage: 'memory',
      prefix,
      // Lowered from the defaults (a quarter and an eighth of the ~900 requests) so the test is cheap.
      args: ['--max-connections-per-client', '64', '--max-unfinished-requests-per-client', '32'],
    });
  });
  after(() => t?.stop());

  test('900 slow bodies from 127.0.0.2 take only its share; the bystander on 127.0.0.1 is served', async (c) => {
    if (!prefix) return c.skip('this machine cannot lower the open-file limit to 1024');
    const host = new URL(t.server.url).host;
    const senders: Raw[] = [];
    // In waves, as a botnet of one host would open them; each announces 100 kB and sends 1 byte.
    for (let wave = 0; wave < 9; wave++) {
      const opened = await Promise.all(Array.from({ length: 100 }, () => raw(t, ATTACKER_ADDRESS)));
      for (const s of opened) {
        if (s.socket.destroyed) continue;
        s.socket.write(
          `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100000\r\n\r\n{`,
        );
      }
      senders.push(...opened);
    }
    // They drip on while the bystander works. (The probe starts once they are open: opening
    // 900 sockets keeps this test process, which runs the probe too, busy for a while.)
    const probe = await t.probe();
    for (let i = 0; i < 10; i++) {
      for (const s of senders) if (!s.socket.destroyed) s.socket.write(' ');
      await sleep(200);
    }
    const served = await probe.stop();
    const open = senders.filter((s) => !s.socket.destroyed).length;
    const refused = senders.filter((s) => /^HTTP\/1\.1 503 /.test(s.answer()));
    c.diagnostic(
      `${senders.length} slow senders: ${open} still open, ${refused.length} answered 503; bystander ${served.calls} calls, p99 ${served.p99Ms.toFixed(1)} ms, server event-loop p99 ${served.eventLoopP99Ms?.toFixed(1)} ms`,
    );
    senders.forEach((s) => s.socket.destroy());
    assertServed(served, '900 slow senders from one address');
    // Of the address's 64 connections, 32 may be sending a body; the rest were answered and closed.
    assert.ok(open <= 32, `${open} of the attacker's connections stayed open`);
    assert.ok(refused.length >= 1, 'requests past the address share are answered 503');
    for (const r of refused)
      assert.match(
        r.answer(),
        /com\.amazonaws\.sqs#ServiceUnavailable.*Too many (unfinished requests|connections) from your address/s,
      );
    assert.equal(t.server.proc.exitCode, null, 'the server lives');
  });
});

describe('bodies of one-byte chunks', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({ storage: 'memory' });
  });
  after(() => t?.stop());

  test('40 connections of one-byte chunks cost the server about what they sent; the bystander is served', async (c) => {
    const CHUNKS = 50_000;
    const CONNECTIONS = 40;
    const host = new URL(t.server.url).host;
    const before = t.rss();
    const probe = await t.probe();
    const oneByte = Buffer.from('1\r\nx\r\n'.repeat(1_000));
    const senders = await Promise.all(Array.from({ length: CONNECTIONS }, () => raw(t, ATTACKER_ADDRESS)));
    let peak = before;
    // The 40 connections are open together and send their bodies one after another: each
    // costs the server one socket read of pieces (some 11,000) before it is cut. Sent all
    // at once they would cost that many reads in one turn of the event loop, as 40 × 64 KiB
    // of any input parsed piece by piece does.
    for (const s of senders) {
      s.socket.write(
        `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      for (let i = 0; i < CHUNKS / 1_000 && !s.socket.destroyed; i++) {
        if (!s.socket.write(oneByte)) await Promise.race([once(s.socket, 'drain'), s.closed]);
        if (i % 10 === 0) peak = Math.max(peak, t.rss());
      }
      if (!s.socket.destroyed) s.socket.write('0\r\n\r\n');
      await Promise.race([s.closed, sleep(10_000)]);
    }
    // Counted at 1 KiB a piece, each body is refused at 6,144 pieces and its connection cut soon after.
    for (const until = Date.now() + 60_000; senders.some((s) => !s.socket.destroyed) && Date.now() < until; ) {
      peak = Math.max(peak, t.rss());
      await sleep(100);
    }
    const served = await probe.stop();
    peak = Math.max(peak, t.rss());
    const sentMb = (CONNECTIONS * CHUNKS * 6) / 2 ** 20;
    const grewMb = (peak - before) / 2 ** 20;
    // The answer goes out before the connection is cut; the client's stack may drop it on the reset.
    const refused = senders.filter((s) => /^HTTP\/1\.1 413 /.test(s.answer())).length;
    c.diagnostic(
      `sent up to ${sentMb.toFixed(1)} MiB of one-byte chunks; ${refused} of ${CONNECTIONS} answered 413; RSS grew ${grewMb.toFixed(1)} MiB at its peak; server event-loop p99 ${served.eventLoopP99Ms?.toFixed(1)} ms`,
    );
    senders.forEach((s) => s.socket.destroy());
    for (const s of senders) {
      // An answer, when the client read one before its connection was cut, is SQS's 413.
      if (s.answer() !== '') assert.match(s.answer(), /^HTTP\/1\.1 413 .*com\.amazonaws\.sqs#RequestEntityTooLarge/s);
    }
    // Kept as the parser's pieces, each piece cost some 300 bytes of heap: about 600 MiB here.
    assert.ok(grewMb < 150, `RSS grew ${grewMb.toFixed(1)} MiB for ${sentMb.toFixed(1)} MiB sent`);
    assertServed(served, '40 connections of one-byte chunks');
  });
});
