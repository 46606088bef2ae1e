/** Every curl example of docs/extensions.md's section on the console's extensions runs as written, in order, and succeeds. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

const doc = readFileSync(new URL('../../../docs/extensions.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Extensions for the console and tools'));
const examples = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

let server: ServerProcess;
useServerProcess({ storage: 'memory' }, (s) => (server = s));

test('the examples of the console extensions run as written', async () => {
  assert.ok(examples.length >= 6, `found ${examples.length} examples`);
  const outputs: Record<string, unknown>[] = [];
  for (const example of examples) {
    // Each command as one line, pointed at this test's server instead of the default port.
    const commands = example
      .replace(/\\\n\s*/g, '')
      .trim()
      .split('\n');
    for (const command of commands) {
      const out = execFileSync('sh', ['-c', command.replaceAll('http://127.0.0.1:9324', server.url)], {
        encoding: 'utf8',
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
