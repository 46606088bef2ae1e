/**
 * Celery (Debian's python3-celery, with kombu over AMQP) against Redrive: a worker whose
 * pidbox queue is named `w1@redrive-test.celery.pidbox` answers a ping, runs a task whose
 * result comes back through the rpc:// backend, and a task it rejects with requeue comes
 * back and completes (acks_late, prefetch 1, global QoS on classic queues).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { needs } from '../support/requirements.js';
import { useAmqpServer } from './support.js';

const APP = fileURLToPath(new URL('../../../test/amqp/celery_app.py', import.meta.url));
const PYTHON = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';

describe('Celery over AMQP', () => {
  const server = useAmqpServer();

  test(
    'a worker with a pidbox queue: ping, a task and its result, a rejected task requeued',
    needs('celery'),
    async () => {
      const env = { ...process.env, REDRIVE_CELERY_BROKER: `${server().url}//` };
      const cwd = dirname(APP);
      const worker = spawn(
        PYTHON,
        [
          '-m',
          'celery',
          '-A',
          'celery_app',
          'worker',
          '--pool=solo',
          '-n',
          'w1@redrive-test',
          '--without-mingle',
          '--without-gossip',
          '-l',
          'warning',
        ],
        { cwd, env },
      );
      let log = '';
      worker.stderr.on('data', (d: Buffer) => (log += d.toString()));
      try {
        const { stdout } = await promisify(execFile)(PYTHON, [APP], { cwd, env, timeout: 60_000 });
        assert.deepEqual(JSON.parse(stdout), { ping: ['w1@redrive-test'], add: 5, flaky: 'done k1' });
      } catch (e) {
        throw new Error(`${(e as Error).message}\nworker log:\n${log}`);
      } finally {
        worker.kill();
        await once(worker, 'exit');
      }
    },
  );
});
