import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settle, testEngine } from './support.js';

describe('long polling on the injected clock', () => {
  const t = testEngine();
  let QueueUrl: string;
  before(async () => {
    QueueUrl = (await t.call('CreateQueue', { QueueName: 'lp' })).QueueUrl;
  });
  after(() => t.close());

  test('a waiting receive is answered by a send, not by the end of the wait', async () => {
    let answered: Record<string, any> | undefined;
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }).then((r) => (answered = r));
    await settle();
    assert.equal(answered, undefined, 'still waiting');
    await t.call('SendMessage', { QueueUrl, MessageBody: 'wake' });
    await pending;
    assert.equal(answered!.Messages[0].Body, 'wake');
    await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: answered!.Messages[0].ReceiptHandle });
  });

  test('a waiting receive wakes when a delayed message becomes visible', async () => {
    await t.call('SendMessage', { QueueUrl, MessageBody: 'later', DelaySeconds: 5 });
    let answered: Record<string, any> | undefined;
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }).then((r) => (answered = r));
    await settle();
    t.clock.advance(4000);
    await settle();
    assert.equal(answered, undefined);
    t.clock.advance(1000);
    await pending;
    assert.equal(answered!.Messages[0].Body, 'later');
    await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: answered!.Messages[0].ReceiptHandle });
  });

  test('a long poll arms its timer with the time its empty receive read, not with a query of its own', async () => {
    const asked = countCalls(t, 'nextVisibleAt');
    try {
      await t.call('SendMessage', { QueueUrl, MessageBody: 'soon', DelaySeconds: 2 });
      const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
      await settle();
      t.clock.advance(2000);
      const r = await pending;
      assert.equal(r.Messages[0].Body, 'soon', 'woken by the timer at the delayed time');
      assert.equal(asked.n, 0);
      await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: r.Messages[0].ReceiptHandle });
    } finally {
      asked.restore();
    }
  });

  test('a waiting receive wakes when an in-flight message times out', async () => {
    await t.call('SendMessage', { QueueUrl, MessageBody: 'again' });
    await t.call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 10 });
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    await settle();
    t.clock.advance(10_000);
    const r = await pending;
    assert.equal(r.Messages[0].Body, 'again');
    assert.equal(r.Messages.length, 1);
    await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: r.Messages[0].ReceiptHandle });
  });

  test('the wait ends empty when its time is up', async () => {
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 3 });
    await settle();
    t.clock.advance(3000);
    assert.deepEqual(await pending, {});
  });

  test('ChangeMessageVisibility to 0 wakes a waiting receive', async () => {
    await t.call('SendMessage', { QueueUrl, MessageBody: 'released' });
    const got = await t.call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 600 });
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    await settle();
    await t.call('ChangeMessageVisibility', {
      QueueUrl,
      ReceiptHandle: got.Messages[0].ReceiptHandle,
      VisibilityTimeout: 0,
    });
    const r = await pending;
    assert.equal(r.Messages[0].Body, 'released');
    await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: r.Messages[0].ReceiptHandle });
  });

  test('an aborted request stops waiting and claims nothing', async () => {
    const abort = new AbortController();
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }, abort.signal);
    await settle();
    abort.abort();
    assert.deepEqual(await pending, {});
    await t.call('SendMessage', { QueueUrl, MessageBody: 'unclaimed' });
    const r = await t.call('ReceiveMessage', { QueueUrl });
    assert.equal(r.Messages[0].Body, 'unclaimed');
    assert.equal(r.Messages[0].ReceiptHandle.length > 0, true);
    await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: r.Messages[0].ReceiptHandle });
  });

  test('one send wakes one waiter, not the whole herd', async () => {
    const attempts = countCalls(t, 'receive');
    try {
      const waits = [1, 2, 3, 4, 5, 6].map(() => t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }));
      await settle();
      attempts.n = 0;
      await t.call('SendMessage', { QueueUrl, MessageBody: 'one' });
      await settle(20);
      // The woken waiter gets the message and passes the wake-up on once; that attempt is empty.
      assert.ok(attempts.n <= 2, `${attempts.n} receive attempts for one message`);
      t.engine.longPolls.releaseAll();
      const results = await Promise.all(waits);
      assert.equal(results.filter((r) => r.Messages?.length).length, 1);
      const got = results.find((r) => r.Messages)!;
      await t.call('DeleteMessage', { QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle });
    } finally {
      attempts.restore();
    }
  });

  test('on a FIFO queue, deleting a message wakes a waiter for the next one in its group', async () => {
    const FifoUrl = (await t.call('CreateQueue', { QueueName: 'lp.fifo', Attributes: { FifoQueue: 'true' } })).QueueUrl;
    const send = (body: string) =>
      t.call('SendMessage', {
        QueueUrl: FifoUrl,
        MessageBody: body,
        MessageGroupId: 'g',
        MessageDeduplicationId: body,
      });
    await send('first');
    await send('second');
    const first = await t.call('ReceiveMessage', { QueueUrl: FifoUrl, MaxNumberOfMessages: 1 });
    const answered: Record<string, any>[] = [];
    const pending = t.call('ReceiveMessage', { QueueUrl: FifoUrl, WaitTimeSeconds: 20 }).then((r) => answered.push(r));
    await settle();
    assert.equal(answered.length, 0, 'the group is held');
    await t.call('DeleteMessage', { QueueUrl: FifoUrl, ReceiptHandle: first.Messages[0].ReceiptHandle });
    await settle(20);
    assert.equal(answered[0]?.Messages?.[0]?.Body, 'second', 'answered without the clock moving');
    await pending;
  });

  test('close() answers every waiting receive with no messages', async () => {
    const waits = [1, 2, 3].map(() => t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }));
    await settle();
    assert.equal(t.engine.longPolls.size, 3);
    t.engine.longPolls.releaseAll();
    assert.deepEqual(await Promise.all(waits), [{}, {}, {}]);
  });
});

test('the long polls tell the store how many messages their idle waiters take, so a shared store can spare the other nodes', async () => {
  const t = testEngine();
  try {
    const { QueueUrl } = await t.call('CreateQueue', { QueueName: 'capacity' });
    const wakeups = t.engine.store.wakeups;
    let capacity: (() => number) | undefined;
    const subscribe = wakeups.subscribe.bind(wakeups);
    wakeups.subscribe = (queueId, listener, cap) => {
      capacity = cap;
      return subscribe(queueId, listener, cap);
    };
    const ten = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 });
    const one = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    await settle();
    assert.equal(capacity?.(), 11, 'two idle waiters, taking 10 and 1');
    await t.call('SendMessage', { QueueUrl, MessageBody: 'm' });
    const got = await ten;
    assert.equal(got.Messages.length, 1);
    assert.equal(capacity?.(), 1, 'the waiter that was answered no longer counts');
    t.clock.advance(20_000);
    assert.deepEqual(await one, {});
  } finally {
    t.close();
  }
});

/**
 * Counts calls of a store method (receives are the round trips a long poll costs on
 * PostgreSQL); `during` runs after each call's work, before its answer.
 */
function countCalls(
  t: ReturnType<typeof testEngine>,
  method: 'receive' | 'nextVisibleAt',
  during?: (n: number) => Promise<void>,
) {
  const store = t.engine.store.messages as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = store[method]!;
  const counter = {
    n: 0,
    restore: () => {
      store[method] = original;
    },
  };
  store[method] = async (...args) => {
    const r = await original.apply(t.engine.store.messages, args);
    counter.n++;
    await during?.(counter.n);
    return r;
  };
  return counter;
}

/** Runs `fn` on a fresh engine with one queue, and closes the engine. */
async function onQueue(name: string, fn: (t: ReturnType<typeof testEngine>, QueueUrl: string) => Promise<void>) {
  const t = testEngine();
  try {
    await fn(t, (await t.call('CreateQueue', { QueueName: name })).QueueUrl);
  } finally {
    await t.close();
  }
}

test('a send that commits while a long poll makes its first attempt answers that poll at once', () =>
  onQueue('race', async (t, QueueUrl) => {
    // The first attempt reads the empty queue; the send commits (and wakes) before the
    // attempt's answer reaches the long poll, which is not waiting yet.
    const receives = countCalls(t, 'receive', async (n) => {
      if (n === 1) await t.call('SendMessage', { QueueUrl, MessageBody: 'in between' });
    });
    const r = await t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    assert.equal(r.Messages?.[0]?.Body, 'in between', 'answered without the clock moving');
    assert.equal(receives.n, 2);
    receives.restore();
  }));

test('while a waiting poll has found the queue empty, another joins the wait without a receive of its own', () =>
  onQueue('known-empty', async (t, QueueUrl) => {
    await t.call('SendMessage', { QueueUrl, MessageBody: 'held' });
    await t.call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 10 });
    const receives = countCalls(t, 'receive');
    const first = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    await settle();
    assert.equal(receives.n, 1, 'the first poll found nothing');
    const second = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 });
    await settle();
    assert.equal(receives.n, 1, 'the second knew the queue empty and asked nothing');
    // The receipt expires: the timer armed from the first poll's empty receive answers it.
    t.clock.advance(10_000);
    assert.equal((await first).Messages[0].Body, 'held');
    // A send announces one message: the second poll is roused for it.
    await t.call('SendMessage', { QueueUrl, MessageBody: 'new' });
    assert.equal((await second).Messages[0].Body, 'new');
    const third = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 1 });
    await settle();
    const before = receives.n;
    await t.call('SendMessage', { QueueUrl, MessageBody: 'after' });
    assert.equal((await third).Messages[0].Body, 'after');
    assert.ok(receives.n > before);
    receives.restore();
  }));

/** Holds the store's receives at a gate, before or after their read, until `open()`. */
function gateReceives(t: ReturnType<typeof testEngine>, where: 'before' | 'after') {
  const store = t.engine.store.messages;
  const original = store.receive.bind(store);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const g = {
    calls: 0,
    open: () => open(),
    restore: () => {
      store.receive = original;
    },
  };
  store.receive = async (id, req) => {
    g.calls++;
    if (where === 'before') await gate;
    const r = await original(id, req);
    if (where === 'after') await gate;
    return r;
  };
  return g;
}

const bodies = (r: Record<string, any>) => r.Messages.map((m: { Body: string }) => m.Body);

/** Two long polls of up to 10 messages, both waiting (their first look found nothing). */
async function twoWaiting(t: ReturnType<typeof testEngine>, QueueUrl: string) {
  const poll = () => t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 });
  const polls = [poll(), poll()];
  await settle();
  return polls;
}

describe('a send batch wakes as many waiting receives as take what it wrote', () => {
  test('a send while an attempt is under way, one that can take it, rouses no other waiter', () =>
    onQueue('supply-covered', async (t, QueueUrl) => {
      const [first, second] = await twoWaiting(t, QueueUrl);
      const gate = gateReceives(t, 'before');
      await t.call('SendMessage', { QueueUrl, MessageBody: 'a' });
      await t.call('SendMessage', { QueueUrl, MessageBody: 'b' });
      await settle();
      assert.equal(gate.calls, 1, 'the first waiter is under way and can take both: the second is not roused');
      gate.open();
      const got = await first;
      assert.deepEqual(bodies(got), ['a', 'b']);
      await settle(20);
      assert.equal(gate.calls, 1);
      t.clock.advance(20_000);
      assert.deepEqual(await second, {});
      gate.restore();
    }));

  test('what an attempt under way read too early to see goes to the next waiter', () =>
    onQueue('supply-left', async (t, QueueUrl) => {
      const [first, second] = await twoWaiting(t, QueueUrl);
      const gate = gateReceives(t, 'after');
      await t.call('SendMessage', { QueueUrl, MessageBody: 'a' });
      await settle();
      // The first waiter has read (it saw only 'a') and is held before it answers.
      await t.call('SendMessage', { QueueUrl, MessageBody: 'b' });
      await settle();
      assert.equal(gate.calls, 1);
      gate.open();
      assert.deepEqual(bodies(await first), ['a']);
      // 'b' was announced and not taken: the second waiter is roused for it, with no clock move.
      assert.deepEqual(bodies(await second), ['b']);
      assert.equal(gate.calls, 2);
      gate.restore();
    }));
});

test('after the timer wakes one waiter, the others get a timer for the next message that becomes visible', () =>
  onQueue('timer-again', async (t, QueueUrl) => {
    await t.call('SendMessage', { QueueUrl, MessageBody: 'at 2 s', DelaySeconds: 2 });
    await t.call('SendMessage', { QueueUrl, MessageBody: 'at 5 s', DelaySeconds: 5 });
    let second: Record<string, any> | undefined;
    const first = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 });
    const pending = t.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }).then((r) => (second = r));
    await settle();
    t.clock.advance(2000);
    assert.deepEqual(bodies(await first), ['at 2 s']);
    await settle();
    t.clock.advance(3000);
    await settle(20);
    // It used to wait for its deadline (20 s): the timer that woke the first was spent.
    assert.deepEqual(second && bodies(second), ['at 5 s']);
    await pending;
  }));

describe('a long poll that ends while a receive attempt runs', () => {
  const t = testEngine();
  after(() => t.close());

  test('returns what that attempt claimed, instead of leaving it in flight with nobody holding it', async () => {
    const { QueueUrl } = await t.call('CreateQueue', { QueueName: 'lp-ending' });
    const queue = (await t.engine.store.queues.get({
      accountId: '000000000000',
      region: 'us-east-1',
      name: 'lp-ending',
    }))!;
    let finishAttempt!: (m: string[]) => void;
    let attempts = 0;
    const attempt = () => {
      attempts++;
      if (attempts === 1) return Promise.resolve({ messages: [] as string[] });
      return new Promise<{ messages: string[] }>((resolve) => (finishAttempt = (m) => resolve({ messages: m })));
    };
    const abort = new AbortController();
    const waited = t.engine.longPolls.wait(queue.id, 20_000, attempt, abort.signal, 1);
    await settle();
    // A send wakes the sleeping poll: its second attempt starts, and the consumer stops meanwhile.
    await t.call('SendMessage', { QueueUrl, MessageBody: 'x' });
    await settle();
    assert.equal(attempts, 2);
    abort.abort();
    await settle();
    finishAttempt(['claimed']);
    assert.deepEqual(await waited, ['claimed']);
  });
});
