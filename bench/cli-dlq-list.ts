import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { deadLetterQueues } from '../src/cli/dlq.js';
import { SqsJsonClient } from '../src/cli/sqs-client.js';
import { allSummaries } from '../src/cli/summaries.js';
import { startServerProcess } from '../test/support/server-process.js';

/**
 * `redrive dlq list` on an account of 2,000 queues (1,000 sources, each with its own
 * dead-letter queue holding a message), SQLite store: the whole command as a user runs
 * it (a new Node process each time) and its requests alone (ListQueueSummaries pages),
 * median of RUNS after one unmeasured run. `node dist/bench/cli-dlq-list.js`
 */
const PAIRS = 1_000;
const RUNS = 7;
const CLI = fileURLToPath(new URL('../src/cli/index.js', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const server = await startServerProcess({ storage: 'sqlite' });
  try {
    const sqs = new SqsJsonClient(server.url);
    for (let i = 0; i < PAIRS; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, PAIRS - i) }, async (_, j) => {
          const n = String(i + j).padStart(4, '0');
          const dlq = await sqs.call<{ QueueUrl: string }>('CreateQueue', { QueueName: `q${n}-dlq` });
          const arn = `arn:aws:sqs:us-east-1:000000000000:q${n}-dlq`;
          await sqs.call('CreateQueue', {
            QueueName: `q${n}`,
            Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 1 }) },
          });
          await sqs.call('SendMessage', { QueueUrl: dlq.QueueUrl, MessageBody: 'x' });
        }),
      );
    }
    const whole: number[] = [];
    const requests: number[] = [];
    let rows = 0;
    for (let i = 0; i <= RUNS; i++) {
      let t = performance.now();
      const out = execFileSync(process.execPath, [CLI, 'dlq', 'list', '--endpoint', server.url], { encoding: 'utf8' });
      const w = performance.now() - t;
      t = performance.now();
      rows = deadLetterQueues(await allSummaries(sqs)).length;
      const r = performance.now() - t;
      if (out.split('\n').filter((l) => /-dlq\s/.test(l)).length !== PAIRS)
        throw new Error(`dlq list printed:\n${out.slice(0, 500)}`);
      if (i > 0) {
        whole.push(w);
        requests.push(r);
      }
    }
    console.log(
      `dlq list, ${2 * PAIRS} queues (${rows} dead-letter queues): whole command ${median(whole).toFixed(0)} ms, ` +
        `requests ${median(requests).toFixed(0)} ms (medians of ${RUNS}; whole: ${whole.map((x) => x.toFixed(0)).join(', ')})`,
    );
  } finally {
    await server.stop();
    server.cleanup();
  }
}

await main();
