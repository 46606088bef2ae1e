/**
 * The README's start command in a clone. `npm start` runs the compiled
 * server directly (no npx, which inside the clone installed the project into npm's cache
 * and compiled it on each first run, and broke for good when interrupted then). Interrupted
 * while it starts, it leaves nothing behind that stops the next start; Ctrl-C (SIGINT to the
 * job's process group, as a terminal sends it) stops a running server gracefully.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { CreateQueueCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../support/server-process.js';
import { serve, startJob, stopJob } from './process-group.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'redrive-start-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

describe("the README's start command in a clone", () => {
  test('the README installs, builds and starts in one command, and `npm start` runs the compiled server', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.match(readme, /```sh\nnpm ci && npm run build && npm start\n```/);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node dist/src/cli/index.js serve');
  });

  test('interrupted while starting, then started again: it serves; Ctrl-C stops it gracefully', async () => {
    const args = ['start', '--', '--port', '0', '--data-dir', dataDir];
    const first = startJob('npm', args, ROOT);
    await new Promise((r) => setTimeout(r, 300));
    await stopJob(first, 'group', 'SIGINT');

    const server = await serve('npm', args, ROOT);
    console.log(`# npm start: listening after ${server.startMs.toFixed(0)} ms`);
    const sqs = sqsClient(server.url);
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'started' }));
      assert.deepEqual((await sqs.send(new ListQueuesCommand({}))).QueueUrls, [QueueUrl]);
    } finally {
      sqs.destroy();
    }
    await stopJob(server, 'group', 'SIGINT');
    assert.match(server.output(), /"msg":"shutting down"[\s\S]*"msg":"stopped"/);
  });
});
