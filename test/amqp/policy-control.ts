/**
 * Policies on both brokers of the differential test: RabbitMQ's through rabbitmqctl
 * (its management plugin is not enabled here), Redrive's through its management API,
 * with the same name, pattern and definition.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { PolicyControl } from './scenarios.js';

const run = promisify(execFile);

export const rabbitPolicies: PolicyControl = {
  async set(name, pattern, definition) {
    await run('rabbitmqctl', ['set_policy', '--apply-to', 'queues', name, pattern, JSON.stringify(definition)], {
      timeout: 30_000,
    });
  },
  async clear(name) {
    await run('rabbitmqctl', ['clear_policy', name], { timeout: 30_000 });
  },
};

/** Basic auth of RabbitMQ's default user, which Redrive accepts from loopback. */
export const GUEST = `Basic ${Buffer.from('guest:guest').toString('base64')}`;

export function redrivePolicies(httpUrl: string): PolicyControl {
  const at = (name: string) => `${httpUrl}/api/policies/%2F/${encodeURIComponent(name)}`;
  return {
    async set(name, pattern, definition) {
      const res = await fetch(at(name), {
        method: 'PUT',
        headers: { authorization: GUEST, 'content-type': 'application/json' },
        body: JSON.stringify({ pattern, definition, 'apply-to': 'queues' }),
      });
      assert.ok(res.status === 201 || res.status === 204, `PUT policy: ${res.status} ${await res.text()}`);
    },
    async clear(name) {
      const res = await fetch(at(name), { method: 'DELETE', headers: { authorization: GUEST } });
      assert.equal(res.status, 204);
    },
  };
}
