/**
 * Every curl example of docs/extensions.md's section on the console's extensions runs as
 * written, in order, and succeeds: with the machine's curl, or where there is none (a
 * laptop may have only Node and npm) with test/support/curl.ts, a stand-in that does what
 * curl does with the options the examples use and refuses any other. Either way `sh` reads
 * each command as a user's shell would; CI has curl, so the real one runs them there.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

const doc = readFileSync(new URL('../../../docs/extensions.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Extensions for the console and tools'));
const examples = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

const hasCurl = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
/** Without curl, `curl` in each command is a shell function running the stand-in. */
const standIn = hasCurl ? '' : 'curl() { "$REDRIVE_NODE" "$REDRIVE_CURL" "$@"; }\n';
const env = {
  ...process.env,
  REDRIVE_NODE: process.execPath,
  REDRIVE_CURL: fileURLToPath(new URL('../support/curl.js', import.meta.url)),
};

let server: ServerProcess;
useServerProcess({ storage: 'memory' }, (s) => (server = s));

test('the examples of the console extensions run as written', async (t) => {
  t.diagnostic(hasCurl ? 'run with curl' : 'no curl here: run with its stand-in, test/support/curl.ts');
  assert.ok(examples.length >= 6, `found ${examples.length} examples`);
  const outputs: Record<string, unknown>[] = [];
  for (const example of examples) {
    // Each command as one line, pointed at this test's server instead of the default port.
    const commands = example
      .replace(/\\\n\s*/g, '')
      .trim()
      .split('\n');
    for (const command of commands) {
      const out = execFileSync('sh', ['-c', standIn + command.replaceAll('http://127.0.0.1:9324', server.url)], {
        encoding: 'utf8',
        env,
      });
      const json = JSON.parse(out) as Record<string, unknown>;
      assert.equal(json.__type, undefined, `${command}\n→ ${out}`);
      outputs.push(json);
    }
  }
  const summaries = outputs.find((o) => 'Queues' in o) as {
    Queues: { QueueName: string; DeadLetterSourceQueueUrls: string[] }[];
  };
  assert.deepEqual(
    summaries.Queues.map((q) => q.QueueName),
    ['orders', 'orders-dlq'],
  );
  assert.deepEqual(summaries.Queues[1]!.DeadLetterSourceQueueUrls, [`${server.url}/000000000000/orders`]);
  assert.ok(
    outputs.some((o) => Array.isArray(o.Failed) && (o.Failed as { Code: string }[])[0]?.Code === 'MessageNotFound'),
  );
  assert.ok(outputs.some((o) => Array.isArray(o.Minutes) && (o.Minutes as unknown[]).length === 60));
});
