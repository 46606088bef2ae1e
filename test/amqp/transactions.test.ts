/**
 * Transactions (tx.select, tx.commit, tx.rollback) with RabbitMQ's semantics, through
 * pika (amqplib has no tx API) against RabbitMQ and Redrive: publishes and settles wait
 * for the commit, a rollback drops the publishes and undoes the settles, a close drops
 * what is uncommitted, confirms and tx exclude each other. And a transaction is bounded.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { needs } from '../support/requirements.js';
import { sameOnBoth } from './both-brokers.js';
import { publishFrames, RawClient } from './raw-client.js';
import { useAmqpServer } from './support.js';

const SCRIPT = fileURLToPath(new URL('../../../test/amqp/pika_transactions.py', import.meta.url));
const PYTHON = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
const run = async (url: string, queue: string) =>
  JSON.parse((await promisify(execFile)(PYTHON, [SCRIPT, url, queue], { timeout: 60_000 })).stdout) as Record<
    string,
    unknown
  >;

describe('transactions', () => {
  const server = useAmqpServer();

  test('pika: commit, rollback, close, and the errors, as on RabbitMQ', needs('pika'), async (t) => {
    const got = await run(server().url, 'tx-semantics');
    assert.deepEqual(got.semantics, [
      ['published, not committed', 0],
      ['rolled back', 0],
      ['committed', 2],
      ['got', 'c', 'd', 0],
      ['ack and reject, not committed', 0],
      ['rolled back', 0],
      ['ack and reject committed', 1],
      ['requeued', 'd', true],
    ]);
    assert.deepEqual(got['confirm then tx'], [406, 'PRECONDITION_FAILED - cannot switch from confirm to tx mode']);
    await sameOnBoth(t, server().url, (url, prefix) => run(url, `${prefix}tx-semantics`));
  });

  test('a transaction holds at most 65,536 publishes and acks: the next closes the channel with 406', async () => {
    const c = await RawClient.signedIn(server().port);
    c.send(1, 'tx.select');
    await c.expect('tx.select-ok');
    const one = publishFrames(1, 'tx-bounded', 'x');
    c.write(Buffer.concat(Array.from({ length: 65_537 }, () => one)));
    const a = await c.answer(30_000);
    assert.deepEqual([a.kind, a.code], ['channel.close', 406]);
    assert.match(a.text ?? '', /at most 65536 publishes and acks/);
    c.close();
  });
});
