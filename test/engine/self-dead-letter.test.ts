/**
 * A queue whose RedrivePolicy names the queue itself (SQS accepts it): a message received
 * too often is dead-lettered into its own queue once, with its receive count started
 * again, never moved over and over; a second death there is a cycle and is parked.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ctx, testEngine } from './support.js';

const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;

for (const fifo of [false, true]) {
  describe(`a ${fifo ? 'FIFO' : 'standard'} queue that is its own dead-letter queue`, () => {
    const { engine, call, close } = testEngine();
    after(close);
    const name = fifo ? 'self.fifo' : 'self';
    const url = `${ctx.baseUrl}/000000000000/${name}`;
    const receive = async () => {
      const out = await call('ReceiveMessage', {
        QueueUrl: url,
        VisibilityTimeout: 0,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'RedriveDeathHistory'],
      });
      return (out.Messages ?? []) as { Body: string; Attributes: Record<string, string> }[];
    };

    test('is accepted, and dead-letters a message into itself once, counting it once', async () => {
      await call('CreateQueue', {
        QueueName: name,
        Attributes: fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {},
      });
      await call('SetQueueAttributes', {
        QueueUrl: url,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(name), maxReceiveCount: 2 }) },
      });
      const attrs = await call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['RedrivePolicy'] });
      assert.equal(JSON.parse(attrs.Attributes.RedrivePolicy).deadLetterTargetArn, arn(name));
      await call('SendMessage', { QueueUrl: url, MessageBody: 'poison', ...(fifo ? { MessageGroupId: 'g' } : {}) });
      assert.equal((await receive())[0]!.Attributes.ApproximateReceiveCount, '1');
      assert.equal((await receive())[0]!.Attributes.ApproximateReceiveCount, '2');
      const moves: number[] = [];
      const deadLettered = engine.deadLettered.bind(engine);
      engine.deadLettered = (q, m) => (moves.push(m.length), deadLettered(q, m));
      // The third receive moves it; a standard receive may hand it out again at once.
      let got = await receive();
      if (got.length === 0) got = await receive();
      engine.deadLettered = deadLettered;
      assert.equal(
        moves.reduce((a, b) => a + b, 0),
        1,
        'one move',
      );
      assert.deepEqual(
        got.map((m) => m.Body),
        ['poison'],
        'still in its queue, not lost',
      );
      assert.equal(got[0]!.Attributes.ApproximateReceiveCount, '1', 'its count started again');
      const history = JSON.parse(got[0]!.Attributes.RedriveDeathHistory!) as {
        queue: string;
        reason: string;
        count: number;
      }[];
      assert.deepEqual(
        history.map((d) => [d.queue, d.reason, d.count]),
        [[name, 'delivery_limit', 1]],
      );
      assert.equal(engine.deadLetterReport.cyclesBroken, 0);
    });

    test('a second death in its own queue is a cycle: the message is parked, not moved again', async () => {
      // Received twice more (counts 1 and 2 above and here), then the next receive parks it.
      assert.equal((await receive())[0]!.Attributes.ApproximateReceiveCount, '2');
      assert.deepEqual(await receive(), []);
      assert.equal(engine.deadLetterReport.cyclesBroken, 1);
      const cycles = await engine.store.queues.get({
        accountId: '000000000000',
        region: 'us-east-1',
        name: fifo ? 'redrive-cycles.fifo' : 'redrive-cycles',
      });
      assert.deepEqual(
        (await engine.store.messages.peek(cycles!.id, 0, 10)).map((m) => m.body),
        ['poison'],
      );
    });
  });
}
