/** Long polling over the JSON protocol, and a long poll across a graceful shutdown. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sqsClient, startServerProcess, useServerProcess, type ServerProcess } from '../support/server-process.js';
import { createQueue, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

/** Starts a receive and reports whether it has answered yet. */
function pending(client: SQSClient, input: ConstructorParameters<typeof ReceiveMessageCommand>[0]) {
  let settled = false;
  const started = performance.now();
  const result = client.send(new ReceiveMessageCommand(input)).then((out) => {
    settled = true;
    return { messages: out.Messages ?? [], elapsedMs: performance.now() - started };
  });
  return { result, isSettled: () => settled };
}

/** Gives the server time to park the receive (real time, well under a second). */
const parked = () => delay(150);

describe('long polling', () => {
  test('answers as soon as a message is sent, long before the wait ends', async () => {
    const url = await createQueue(sqs, 'lp-send');
    const poll = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    assert.equal(poll.isSettled(), false);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'wake up' }));
    const { messages, elapsedMs } = await poll.result;
    assert.deepEqual(
      messages.map((m) => m.Body),
      ['wake up'],
    );
    // The manual clock never moved, so only the send can have ended the wait.
    assert.ok(elapsedMs < 5_000, `took ${elapsedMs} ms`);
  });

  test('ends empty when the wait time passes', async () => {
    const url = await createQueue(sqs, 'lp-timeout');
    const poll = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 5 });
    await parked();
    await server.advanceClock(4_999);
    await parked();
    assert.equal(poll.isSettled(), false);
    await server.advanceClock(1);
    assert.deepEqual((await poll.result).messages, []);
  });

  test('the queue ReceiveMessageWaitTimeSeconds applies when WaitTimeSeconds is absent; 0 overrides it', async () => {
    const url = await createQueue(sqs, 'lp-queue-default', { ReceiveMessageWaitTimeSeconds: '3' });
    assert.deepEqual(await receive(sqs, url, { WaitTimeSeconds: 0 }), []);
    const poll = pending(sqs, { QueueUrl: url });
    await parked();
    assert.equal(poll.isSettled(), false);
    await server.advanceClock(3_000);
    assert.deepEqual((await poll.result).messages, []);
  });

  test('returns a delayed message when its delay ends during the wait', async () => {
    const url = await createQueue(sqs, 'lp-delayed');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'delayed', DelaySeconds: 5 }));
    const poll = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    await server.advanceClock(5_000);
    assert.deepEqual(
      (await poll.result).messages.map((m) => m.Body),
      ['delayed'],
    );
  });

  test('returns a message made visible by ChangeMessageVisibility 0', async () => {
    const url = await createQueue(sqs, 'lp-cmv');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'again' }));
    const [m] = await receive(sqs, url);
    const poll = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    await sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m!.ReceiptHandle!, VisibilityTimeout: 0 }),
    );
    assert.deepEqual(
      (await poll.result).messages.map((x) => x.Body),
      ['again'],
    );
  });

  test('returns a message whose visibility timeout expires during the wait', async () => {
    const url = await createQueue(sqs, 'lp-expire');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'expires' }));
    await receive(sqs, url, { VisibilityTimeout: 10 });
    const poll = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    await server.advanceClock(10_000);
    assert.deepEqual(
      (await poll.result).messages.map((x) => x.Body),
      ['expires'],
    );
  });

  test('one message wakes one of two waiting receives; the other keeps waiting', async () => {
    const url = await createQueue(sqs, 'lp-two');
    const first = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    const second = pending(sqs, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'only one' }));
    const winner = await Promise.race([first.result, second.result]);
    assert.deepEqual(
      winner.messages.map((m) => m.Body),
      ['only one'],
    );
    await parked();
    const loser = first.isSettled() && second.isSettled() ? undefined : first.isSettled() ? second : first;
    assert.ok(loser, 'the second receive must still be waiting');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'second' }));
    assert.deepEqual(
      (await loser.result).messages.map((m) => m.Body),
      ['second'],
    );
  });

  test('a receive whose client went away does not take a later message', async () => {
    const url = await createQueue(sqs, 'lp-abort');
    const abort = new AbortController();
    const gone = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }), {
      abortSignal: abort.signal,
    });
    await parked();
    abort.abort();
    await assert.rejects(gone);
    await parked();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'for the living' }));
    assert.deepEqual(
      (await receive(sqs, url)).map((m) => m.Body),
      ['for the living'],
    );
  });
});

test('graceful shutdown answers a waiting long poll with no messages and exits 0', async () => {
  const own = await startServerProcess({ storage: 'sqlite', manualClock: true });
  // Not own.client(): stop() destroys those clients, and this one must see the answer.
  const client = sqsClient(own.url);
  try {
    const url = await createQueue(client, 'shutdown');
    const poll = pending(client, { QueueUrl: url, WaitTimeSeconds: 20 });
    await parked();
    assert.equal(poll.isSettled(), false);
    const exitCode = await own.stop();
    const { messages } = await poll.result;
    assert.deepEqual(messages, []);
    assert.equal(exitCode, 0);
    assert.match(own.output(), /"msg":"stopped"/);
  } finally {
    client.destroy();
    own.cleanup();
  }
});
