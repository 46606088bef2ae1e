/**
 * AMQP 1.0 with the other protocols on the same queues: a rejection dead-lettered
 * through a dead-letter exchange, read back by Qpid Proton with x-opt-deaths in the
 * seed's types, by amqplib with x-death and over SQS with RedriveDeathHistory; messages
 * sent by rhea, Proton, amqplib and the AWS SDK received intact by the others (the
 * outcomes against a delivery limit are in outcomes.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { needs } from '../support/requirements.js';
import { pause, proton, receiver, send, useAmqp10Server, type ProtonReceived, type Typed } from './support.js';

describe('AMQP 1.0 with 0-9-1 and SQS on the same queues', { timeout: 120_000 }, () => {
  const env = useAmqp10Server();
  const url = (q: string) => `${env().redrive.server.url}/000000000000/${q}`;

  test(
    'a rejected message goes through the dead-letter exchange; x-opt-deaths has the seed types',
    needs('proton'),
    async () => {
      const { redrive, ch, c } = env();
      await ch.assertExchange('i-dlx', 'fanout');
      await ch.assertQueue('i-dlq');
      await ch.assertQueue('i-dlq-091');
      await ch.bindQueue('i-dlq', 'i-dlx', '');
      await ch.bindQueue('i-dlq-091', 'i-dlx', '');
      await ch.assertQueue('i-src', { arguments: { 'x-dead-letter-exchange': 'i-dlx' } });
      assert.deepEqual(await send(c, '/queues/i-src', [{ body: 'doomed', ttl: 600_000, message_id: 'd-1' }]), [
        { outcome: 'accepted' },
      ]);
      const r = receiver(c, 'i-src');
      r.link.add_credit(1);
      const [got] = await r.next(1);
      got!.delivery.reject({ condition: 'app:no', description: 'not today' });
      r.link.close();
      await pause(300);

      const dead = (await proton(redrive.port, 'receive', 'i-dlq')) as ProtonReceived;
      assert.equal(dead.body, 'doomed');
      const [kind, entries] = dead.annotations['x-opt-deaths']!;
      assert.equal(kind, 'array');
      const [first] = entries as [string, Record<string, [string, Typed]>][];
      assert.equal(first![0], 'map');
      const death = first![1];
      // Every key a symbol, every value of the seed's type.
      for (const [k, [keyType]] of Object.entries(death)) assert.equal(keyType, 'symbol', `key ${k}`);
      const typeOf = (k: string) => death[k]![1][0];
      const valueAt = (k: string) => death[k]![1][1];
      assert.deepEqual(Object.fromEntries(Object.keys(death).map((k) => [k, typeOf(k)])), {
        queue: 'str',
        reason: 'symbol',
        count: 'ulong',
        'first-time': 'timestamp',
        'last-time': 'timestamp',
        exchange: 'str',
        'routing-keys': 'array',
        ttl: 'uint',
      });
      assert.equal(valueAt('queue'), 'i-src');
      assert.equal(valueAt('reason'), 'rejected');
      assert.equal(valueAt('count'), 1);
      assert.equal(valueAt('exchange'), '');
      assert.deepEqual(valueAt('routing-keys'), [['str', 'i-src']]);
      assert.equal(valueAt('ttl'), 600000);
      assert.deepEqual(dead.annotations['x-first-death-queue'], ['str', 'i-src']);
      assert.deepEqual(dead.annotations['x-first-death-reason'], ['str', 'rejected']);
      assert.deepEqual(dead.annotations['x-last-death-exchange'], ['str', '']);
      assert.deepEqual(dead.annotations['x-exchange'], ['str', 'i-dlx']);

      // The same dead letter, copied to a second queue, over 0-9-1: x-death.
      const m = await ch.get('i-dlq-091', { noAck: true });
      assert.ok(m);
      assert.equal(m.content.toString(), 'doomed');
      const xDeath = m.properties.headers?.['x-death'] as { queue: string; reason: string; count: number }[];
      assert.deepEqual(
        xDeath.map((d) => [d.queue, d.reason, d.count]),
        [['i-src', 'rejected', 1]],
      );
      assert.equal(m.properties.headers?.['x-first-death-reason'], 'rejected');
    },
  );

  test('a dead letter of a 1.0 message is read over SQS with RedriveDeathHistory', async () => {
    const { redrive, ch, c } = env();
    const sqs = redrive.server.client();
    await ch.assertQueue('i-sqs-dlq');
    await ch.assertExchange('i-sqs-dlx', 'fanout');
    await ch.bindQueue('i-sqs-dlq', 'i-sqs-dlx', '');
    await ch.assertQueue('i-sqs-src', { arguments: { 'x-dead-letter-exchange': 'i-sqs-dlx' } });
    await send(c, '/queues/i-sqs-src', [{ body: 'to sqs' }]);
    const r = receiver(c, 'i-sqs-src');
    r.link.add_credit(1);
    const [got] = await r.next(1);
    got!.delivery.modified({ undeliverable_here: true });
    r.link.close();
    await pause(300);
    const seen = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('i-sqs-dlq'),
        MessageSystemAttributeNames: ['RedriveDeathHistory'] as never[],
      }),
    );
    const [dead] = seen.Messages ?? [];
    assert.equal(dead?.Body, 'to sqs');
    const history = JSON.parse((dead!.Attributes as Record<string, string>).RedriveDeathHistory!) as {
      queue: string;
      reason: string;
    }[];
    assert.deepEqual(
      history.map((d) => [d.queue, d.reason]),
      [['i-sqs-src', 'rejected']],
      'modified with undeliverable-here dead-letters as rejected',
    );
  });

  test(
    'rhea, Proton, amqplib and the AWS SDK send to one queue; each receives the others intact',
    needs('proton'),
    async () => {
      const { redrive, ch, c } = env();
      const sqs = redrive.server.client();
      await ch.assertQueue('i-mixed');
      await send(c, '/queues/i-mixed', [{ body: 'from rhea', application_properties: { n: 1 } }]);
      await proton(redrive.port, 'send', 'i-mixed', 'from proton');
      ch.sendToQueue('i-mixed', Buffer.from('from amqplib'), { headers: { n: 3 }, messageId: 'a-3', persistent: true });
      await sqs.send(new SendMessageCommand({ QueueUrl: url('i-mixed'), MessageBody: 'from sqs ✓' }));
      await pause(200);

      // Proton reads the first two: rhea's and its own, with their typed properties.
      const fromRhea = (await proton(redrive.port, 'receive', 'i-mixed')) as ProtonReceived;
      assert.equal(fromRhea.body, 'from rhea');
      assert.deepEqual(fromRhea.properties.n, ['uint', 1], 'rhea sends 1 as a uint: the type is kept');
      const own = (await proton(redrive.port, 'receive', 'i-mixed')) as ProtonReceived;
      assert.equal(own.body, 'from proton');
      assert.deepEqual(own.properties.who, ['str', 'proton']);
      assert.equal(own.durable, true);

      // rhea reads amqplib's (converted: headers as application properties) and the SQS one (a data section).
      const r = receiver(c, 'i-mixed', { autoaccept: true });
      r.link.add_credit(2);
      const text = (x: { message: { body: unknown } }) =>
        Buffer.from((x.message.body as { content: Buffer }).content).toString();
      const two = await r.next(2);
      const a = two.find((x) => text(x) === 'from amqplib');
      const s = two.find((x) => text(x) !== 'from amqplib');
      assert.ok(a, 'the amqplib message came');
      assert.deepEqual(a!.message.application_properties, { n: 3 });
      assert.equal(a!.message.message_id, 'a-3');
      assert.equal(a!.message.durable, true);
      assert.equal(text(s!), 'from sqs ✓');
      r.link.close();

      // And the other way: a 1.0 message over SQS and 0-9-1.
      await send(c, '/queues/i-mixed', [{ body: 'text for sqs' }, { body: 'text for 0-9-1', subject: 'kind' }]);
      const viaSqs = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url('i-mixed'), MaxNumberOfMessages: 1 }));
      assert.equal(viaSqs.Messages?.[0]?.Body, 'text for sqs');
      await pause(100);
      const via091 = await ch.get('i-mixed', { noAck: true });
      assert.ok(via091);
      assert.equal(via091.content.toString(), 'text for 0-9-1');
      assert.equal(via091.properties.type, 'kind');
    },
  );
});
