/**
 * The hostile-tenant harness itself: with no attack, the bystander is served, and a probe
 * notices a server that stops answering (so a passing attack test means something).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertServed, startTenants, type TenantServer } from '../support/hostile-tenant.js';

let t: TenantServer;
before(async () => {
  t = await startTenants();
});
after(() => t.stop());

test('with no attack the bystander is served within the bar', async () => {
  const probe = await t.probe();
  await new Promise((r) => setTimeout(r, 500));
  const served = await probe.stop();
  assertServed(served, 'no attack');
  assert.ok(served.eventLoopP99Ms !== undefined, 'the server reports its event-loop delay');
});

test('a stopped server fails the bar', async () => {
  const probe = await t.probe({ queue: 'probe-stopped' });
  t.server.proc.kill('SIGSTOP');
  await new Promise((r) => setTimeout(r, 400));
  t.server.proc.kill('SIGCONT');
  const served = await probe.stop();
  assert.throws(() => assertServed(served, 'stopped'), /waited|refused|too few/);
});
