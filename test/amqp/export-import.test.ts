/**
 * AMQP dead letters round-trip through `redrive messages export` and `import`: binary
 * bodies (marked base64 in the file), every content property and the headers table with
 * its field types come back, and an AMQP consumer of the restored queue gets the same
 * properties and body bytes. A message rejected over AMQP keeps its receive count in its
 * dead-letter queue (as SQS dead letters do), yet its first delivery from there is not
 * flagged redelivered (RabbitMQ counts deliveries per queue).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { GetMessage, Options } from 'amqplib';
import { cliAt } from '../cli/support.js';
import { pause, useMixedServer } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'redrive-amqp-export-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every property a publisher can set, and headers of many field types. */
function published(i: number): Options.Publish {
  return {
    contentType: i === 0 ? 'text/plain' : 'application/octet-stream',
    contentEncoding: 'identity',
    deliveryMode: 2,
    priority: 3,
    correlationId: `corr-${i}`,
    replyTo: 'replies',
    expiration: '600000',
    messageId: `msg-${i}`,
    timestamp: 1_700_000_000 + i,
    type: 'order.created',
    userId: 'guest',
    appId: 'billing',
    headers: {
      tenant: 'acme',
      attempt: i,
      big: 70_000,
      huge: 2 ** 40,
      ratio: 0.5,
      flag: true,
      nothing: null,
      raw: Buffer.from([0xff, 0x00, 0xfe]),
      list: ['a', 1],
      nested: { depth: 2, name: 'inner' },
      typed: { '!': 'unsignedshort', value: 65_000 },
      when: { '!': 'timestamp', value: 1_700_000_123 },
    },
  };
}

const take = (m: GetMessage | false): GetMessage => {
  assert.ok(m, 'a message is ready');
  return m;
};

interface Peeked {
  Body: string;
  BodyEncoding?: string;
  Attributes: Record<string, string>;
  Amqp?: { Exchange: string; RoutingKey: string; Properties: Record<string, unknown> };
}

describe('AMQP dead letters through export and import', () => {
  const server = useMixedServer();

  test('export -> purge -> import of an AMQP DLQ keeps binary bodies, properties and typed headers; consumed byte-identical', async () => {
    const { conn, redrive } = server();
    const cli = cliAt(redrive.server.url);
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange('xi-dlx', 'direct');
    await ch.assertQueue('xi-work', { arguments: { 'x-dead-letter-exchange': 'xi-dlx' } });
    await ch.assertQueue('xi-dead');
    await ch.bindQueue('xi-dead', 'xi-dlx', 'xi-work');
    await ch.assertQueue('xi-restore');
    const bodies = [Buffer.from('plain text'), randomBytes(24), Buffer.from([0xc3, 0x28, 0x00, 0xff, 0x80])];
    bodies.forEach((b, i) => ch.sendToQueue('xi-work', b, published(i)));
    await ch.waitForConfirms();
    for (let i = 0; i < bodies.length; i++) ch.reject(take(await ch.get('xi-work')), false);
    await pause(200);

    // Item 6: one delivery, then basic.reject: the dead letter still says it was received once.
    const peek = await cli('dlq', 'peek', 'xi-dead');
    assert.equal(peek.code, 0, peek.stderr);
    assert.equal((peek.stdout.match(/received 1x/g) ?? []).length, 3, peek.stdout);
    assert.match(
      peek.stdout,
      /rejected over AMQP \(basic\.reject or basic\.nack\).*exchange \(default\), routing keys xi-work/,
    );
    assert.match(peek.stdout, /amqp: exchange xi-dlx, routing key xi-work/);
    assert.match(peek.stdout, /header typed \(u\): 65000/);
    assert.match(peek.stdout, /body: binary, 24 bytes, application\/octet-stream/);

    // The dead letters as an AMQP consumer sees them: not redelivered (first delivery from this queue).
    const before: GetMessage[] = [];
    for (let i = 0; i < bodies.length; i++) before.push(take(await ch.get('xi-dead')));
    assert.deepEqual(
      before.map((m) => m.fields.redelivered),
      [false, false, false],
    );
    ch.nackAll(true);
    await pause(100);

    const file = join(dir, 'dead.jsonl');
    const exported = await cli('messages', 'export', 'xi-dead', '--out', file);
    assert.equal(exported.code, 0, exported.stderr);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Peeked & { DeathHistory: { exchange?: string }[] });
    assert.equal(lines.length, 3);
    assert.deepEqual(
      lines.map((l) => l.BodyEncoding),
      [undefined, 'base64', 'base64'],
      'binary bodies are marked base64',
    );
    assert.deepEqual(Buffer.from(lines[1]!.Body, 'base64'), bodies[1]);
    const headers = lines[1]!.Amqp!.Properties.headers as Record<
      string,
      { type: string; value?: unknown; base64?: string }
    >;
    assert.deepEqual(
      Object.fromEntries(
        ['tenant', 'attempt', 'big', 'huge', 'ratio', 'flag', 'nothing', 'raw', 'typed', 'when'].map((k) => [
          k,
          headers[k]!.type,
        ]),
      ),
      {
        tenant: 'S',
        attempt: 'b',
        big: 'I',
        huge: 'l',
        ratio: 'd',
        flag: 't',
        nothing: 'V',
        raw: 'x',
        typed: 'u',
        when: 'T',
      },
    );
    assert.deepEqual(headers.raw, { type: 'x', base64: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') });
    assert.equal(lines[1]!.Amqp!.Exchange, 'xi-dlx');
    assert.equal(lines[1]!.DeathHistory[0]!.exchange, '');

    await ch.purgeQueue('xi-dead');
    const imported = await cli('messages', 'import', 'xi-restore', '--in', file);
    assert.equal(imported.stdout, 'imported 3 messages into xi-restore\n', imported.stderr);

    // Stored as they were: the restored queue peeks the same AMQP view and history.
    const again = await cli('messages', 'export', 'xi-restore');
    const restoredLines = again.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Peeked & { DeathHistory: unknown });
    assert.deepEqual(
      restoredLines.map((l) => [l.Body, l.BodyEncoding, l.Amqp, l.DeathHistory]),
      lines.map((l) => [l.Body, l.BodyEncoding, l.Amqp, l.DeathHistory]),
    );

    const after: GetMessage[] = [];
    for (let i = 0; i < bodies.length; i++) after.push(take(await ch.get('xi-restore', { noAck: true })));
    after.forEach((m, i) => {
      assert.deepEqual(m.content, bodies[i], `body ${i} byte-identical`);
      assert.deepEqual(
        m.properties,
        before[i]!.properties,
        `properties ${i} (x-death included) as the dead letter had them`,
      );
      assert.equal(m.fields.exchange, 'xi-dlx');
      assert.equal(m.fields.routingKey, 'xi-work');
    });
    assert.equal(after[2]!.properties.headers?.tenant, 'acme');
    assert.deepEqual(after[2]!.properties.headers?.raw, Buffer.from([0xff, 0x00, 0xfe]));
    await ch.close();

    // Nothing is held by a stopped process here; the command says so.
    const release = await cli('messages', 'release-amqp');
    assert.match(release.stdout, /^released 0 deliveries \(this server is [0-9a-f]{16}\)\n$/, release.stderr);
    const bad = await cli('messages', 'release-amqp', 'not-a-holder');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Holder must be 16 hexadecimal digits/);
  });

  test('an import with a bad AMQP part is refused line by line, and nothing is half-stored', async () => {
    const { redrive, sqs, url } = server();
    const cli = cliAt(redrive.server.url);
    await cli('queues', 'create', 'xi-bad');
    const { SendMessageCommand, GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
    const send = (value: string, body = 'AAEC') =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: url('xi-bad'),
          MessageBody: body,
          MessageSystemAttributes: { RedriveAmqp: { DataType: 'String', StringValue: value } } as never,
        }),
      );
    const cases: [string, RegExp, string?][] = [
      ['[]', /RedriveAmqp is invalid\. Reason: it must be a JSON object\./],
      ['{"Exchange":"x","Other":1}', /unknown field Other/],
      ['{"BodyEncoding":"hex"}', /BodyEncoding must be "base64"/],
      ['{"BodyEncoding":"base64"}', /not canonical base64/, 'not base64!'],
      ['{"Properties":{"priority":300}}', /Properties: priority must be a whole number from 0 to 255/],
      ['{"Properties":{"headers":{"a":{"type":"Q","value":1}}}}', /unknown field type "Q"/],
      ['{"Properties":{"headers":{"a":{"type":"I","value":4294967296}}}}', /headers\.a must be a whole number/],
      ['{"Properties":{"expiration":"soon"}}', /expiration must be milliseconds/],
    ];
    for (const [value, message, body] of cases) {
      await assert.rejects(
        send(value, body),
        (e: Error) => e.name === 'InvalidParameterValue' && message.test(e.message),
        value,
      );
    }
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url('xi-bad'), AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(attrs.Attributes?.ApproximateNumberOfMessages, '0');
  });
});
