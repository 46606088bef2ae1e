/**
 * A second client in another language: Python's pika runs the same publish, consume,
 * reject scenario (pika_scenario.py) against RabbitMQ and against Redrive, and both must
 * observe the same.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { needs } from '../support/requirements.js';
import { RABBIT_URL, rabbitOrSkip, useAmqpServer } from './support.js';

const SCRIPT = fileURLToPath(new URL('../../../test/amqp/pika_scenario.py', import.meta.url));
const PYTHON = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
const run = async (url: string, queue: string) =>
  JSON.parse((await promisify(execFile)(PYTHON, [SCRIPT, url, queue], { timeout: 30_000 })).stdout) as unknown;

describe('pika', () => {
  const server = useAmqpServer();

  test(
    'publish, get, reject, consume with prefetch, nack with requeue, ack: the same as on RabbitMQ',
    needs('pika'),
    async (t) => {
      const rabbit = await rabbitOrSkip(t);
      if (!rabbit) return;
      await rabbit.close();
      const queue = `redrive-pika-${randomBytes(3).toString('hex')}`;
      const want = await run(RABBIT_URL, queue);
      const got = await run(server().url, queue);
      t.diagnostic(`RabbitMQ: ${JSON.stringify(want)}`);
      assert.deepEqual(got, want);
    },
  );
});
