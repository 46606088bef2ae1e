/**
 * AMQP connections: sign-in (guest on loopback by default; with --credentials, an access
 * key and secret acting as the key's account) and heartbeats.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import amqp from 'amqplib';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { PROTOCOL_HEADER } from '../../src/protocols/amqp/frames.js';
import { RawClient } from './raw-client.js';
import { startAmqpServer, type AmqpServer } from './support.js';

const refusal = async (url: string) =>
  amqp.connect(url).then(
    async (c) => (await c.close(), 'connected'),
    (e: Error) => e.message,
  );

describe('AMQP connections', () => {
  const servers: AmqpServer[] = [];
  after(async () => {
    for (const s of servers) {
      await s.server.stop();
      s.server.cleanup();
    }
  });

  test('without --credentials: guest/guest signs in; another password is refused with 403', async () => {
    const s = await startAmqpServer();
    servers.push(s);
    const conn = await amqp.connect(s.url);
    await conn.close();
    assert.match(await refusal(`amqp://guest:wrong@127.0.0.1:${s.port}`), /403|ACCESS_REFUSED|Login was refused/);
    // Another virtual host: 530 NOT_ALLOWED, as RabbitMQ answers an unknown one.
    const c = await RawClient.open(s.port);
    c.write(PROTOCOL_HEADER);
    await c.expect('connection.start');
    c.send(0, 'connection.start-ok', {
      clientProperties: new Map(),
      mechanism: 'PLAIN',
      response: Buffer.from('\0guest\0guest'),
      locale: 'en_US',
    });
    await c.expect('connection.tune');
    c.send(0, 'connection.tune-ok', { channelMax: 2047, frameMax: 131072, heartbeat: 0 });
    c.send(0, 'connection.open', { virtualHost: 'other' });
    const answer = await c.answer();
    assert.deepEqual([answer.kind, answer.code], ['connection.close', 530]);
    c.close();
  });

  test("with --credentials: an access key and its secret act as the key's account; guest is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'redrive-amqp-'));
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ AKIDAMQP: { secretAccessKey: 's3cret', accountId: '111122223333' } }));
    const s = await startAmqpServer({ args: ['--credentials', file] });
    servers.push(s);
    assert.match(await refusal(s.url), /403|ACCESS_REFUSED|Login was refused/);
    assert.match(await refusal(`amqp://AKIDAMQP:wrong@127.0.0.1:${s.port}`), /403|ACCESS_REFUSED|Login was refused/);
    const conn = await amqp.connect(`amqp://AKIDAMQP:s3cret@127.0.0.1:${s.port}`);
    const ch = await conn.createChannel();
    await ch.assertQueue('keyed');
    // The queue is the account's: a signed SQS send from the same key reaches it.
    const sqs = new SQSClient({
      endpoint: s.server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDAMQP', secretAccessKey: 's3cret' },
      maxAttempts: 1,
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: `${s.server.url}/111122223333/keyed`, MessageBody: 'signed' }));
    sqs.destroy();
    const m = await ch.get('keyed', { noAck: true });
    assert.ok(m);
    assert.equal(m.content.toString(), 'signed');
    await conn.close();
  });

  test('heartbeats: the server sends them at half the interval and closes a silent connection after two', async () => {
    const s = servers[0] ?? (await startAmqpServer());
    if (!servers.includes(s)) servers.push(s);
    const c = await RawClient.open(s.port);
    c.write(PROTOCOL_HEADER);
    await c.expect('connection.start');
    c.send(0, 'connection.start-ok', {
      clientProperties: new Map(),
      mechanism: 'PLAIN',
      response: Buffer.from('\0guest\0guest'),
      locale: 'en_US',
    });
    const tune = await c.expect('connection.tune');
    assert.equal(tune.heartbeat, 60, "RabbitMQ's default is proposed");
    c.send(0, 'connection.tune-ok', { channelMax: 2047, frameMax: 131072, heartbeat: 1 });
    c.send(0, 'connection.open', { virtualHost: '/' });
    await c.expect('connection.open-ok');
    const started = Date.now();
    const end = await c.answer(5000);
    const waited = Date.now() - started;
    assert.equal(end.kind, 'eof', 'a silent peer is disconnected');
    assert.ok(waited >= 1500 && waited < 4000, `closed after ${waited} ms, expected two to three heartbeat intervals`);
    assert.ok(c.heartbeats >= 2, `the server sent ${c.heartbeats} heartbeats meanwhile`);
  });
});
