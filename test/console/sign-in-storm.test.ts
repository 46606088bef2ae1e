/**
 * A sign-in storm: many parallel failing sign-ins from one
 * address, most given up by the client at once, while a good SDK client and a good
 * operator (from another address) keep being served. Failed sign-ins are answered at once
 * (401, then 429 with Retry-After): none holds a request slot or sleeps in the server, so
 * the storm cannot fill the server's request budget (896 with 1024 open files) and turn
 * every signed SQS call into 503. Bounded: 1,500 requests by 50 clients, about 10 s.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { openFileLimit, startServerProcess, type ServerProcess } from '../support/server-process.js';

const KEYS = { AKIDSTORM: { secretAccessKey: 'storm-secret', accountId: '111111111111' } };
const ATTACKER = '203.0.113.66';
const OPERATOR = '198.51.100.4';
const WORKERS = 50;
const PER_WORKER = 30;
/** A good call slower than this during the storm fails the test: far above its normal few ms, for a loaded machine. */
const SLOW_MS = 10_000;
/** Where a good call is abandoned, so that the test ends even against a server that holds them. */
const GIVE_UP_MS = 20_000;

const dir = mkdtempSync(join(tmpdir(), 'redrive-storm-'));
let server: ServerProcess | undefined;
const lowered = openFileLimit(1024);

before(async () => {
  writeFileSync(join(dir, 'keys.json'), JSON.stringify(KEYS));
  // The throttle runs on the server's clock: a manual one, never moved, keeps the attacker's
  // wait from running out on a slow machine.
  server = await startServerProcess({
    storage: 'memory',
    manualClock: true,
    prefix: lowered ?? [],
    args: ['--credentials', join(dir, 'keys.json'), '--trust-proxy', '127.0.0.1'],
  });
});

after(async () => {
  await server?.stop();
  server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function signIn(secret: string, from: string, signal?: AbortSignal) {
  const url = new URL(server!.url);
  return fetch(`${server!.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    signal,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin, 'x-forwarded-for': from },
    body: new URLSearchParams({ accessKeyId: 'AKIDSTORM', secretAccessKey: secret, next: '/console/' }).toString(),
  });
}

test('a storm of failed sign-ins slows the attacker only', async (t) => {
  if (!lowered)
    t.diagnostic('the open-file limit cannot be lowered to 1024: the storm runs against the default open-file limit');
  const sqs = new SQSClient({
    endpoint: server!.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDSTORM', secretAccessKey: KEYS.AKIDSTORM.secretAccessKey },
    maxAttempts: 1,
  });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'storm' }));

  let storming = true;
  const outcomes = { checked: 0, throttled: 0, abandoned: 0, other: [] as number[] };
  // Each attacker gives up on an answer after 300 ms: the server must not keep working for it.
  const storm = Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (let i = 0; i < PER_WORKER; i++) {
        try {
          const res = await signIn(`guess-${w}-${i}`, ATTACKER, AbortSignal.timeout(300));
          await res.arrayBuffer();
          if (res.status === 401) outcomes.checked++;
          else if (res.status === 429) outcomes.throttled++;
          else outcomes.other.push(res.status);
        } catch {
          outcomes.abandoned++;
        }
      }
    }),
  ).finally(() => (storming = false));

  const slow: string[] = [];
  const failures: string[] = [];
  const timed = async (what: string, call: () => Promise<unknown>) => {
    const started = performance.now();
    try {
      await call();
    } catch (e) {
      failures.push(`${what}: ${(e as Error).name} ${(e as Error).message}`);
    }
    const ms = performance.now() - started;
    if (ms > SLOW_MS) slow.push(`${what} took ${Math.round(ms)} ms`);
  };
  const client = (async () => {
    let n = 0;
    do {
      await timed(`send ${n}`, () =>
        sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `m${n}` }), {
          abortSignal: AbortSignal.timeout(GIVE_UP_MS),
        }),
      );
      await timed(`receive ${n}`, () =>
        sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }), {
          abortSignal: AbortSignal.timeout(GIVE_UP_MS),
        }),
      );
      n++;
    } while (storming);
    // And once more after the storm, when today's server would still be sleeping on it.
    await timed('send after', () =>
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after' }), {
        abortSignal: AbortSignal.timeout(GIVE_UP_MS),
      }),
    );
    return n;
  })();
  const operator = (async () => {
    await new Promise((r) => setTimeout(r, 200));
    let cookie = '';
    await timed('operator sign-in', async () => {
      const res = await signIn(KEYS.AKIDSTORM.secretAccessKey, OPERATOR, AbortSignal.timeout(GIVE_UP_MS));
      if (res.status !== 303) throw new Error(`answered ${res.status}`);
      cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    });
    if (!cookie) return;
    await timed('operator ListQueues', async () => {
      const page = await (
        await fetch(`${server!.url}/console/`, { headers: { cookie }, signal: AbortSignal.timeout(GIVE_UP_MS) })
      ).text();
      const csrf = /<meta name="redrive-csrf" content="([^"]+)">/.exec(page)![1]!;
      const api = await fetch(`${server!.url}/console/api`, {
        method: 'POST',
        body: '{}',
        signal: AbortSignal.timeout(GIVE_UP_MS),
        headers: {
          cookie,
          'x-redrive-csrf': csrf,
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'AmazonSQS.ListQueues',
        },
      });
      if (api.status !== 200) throw new Error(`answered ${api.status}`);
    });
  })();
  const [, rounds] = await Promise.all([storm, client, operator]);
  sqs.destroy();
  t.diagnostic(
    `storm: ${JSON.stringify({ ...outcomes, other: outcomes.other.length })}; good client rounds: ${rounds}`,
  );

  assert.deepEqual(failures, [], 'every call of the good client and the operator succeeded');
  assert.deepEqual(slow, [], 'and none waited long');
  assert.deepEqual(outcomes.other, [], 'failed sign-ins are answered 401 or 429, never shed');
  assert.ok(outcomes.checked <= 11, `${outcomes.checked} guesses were checked`);

  const last = await signIn(KEYS.AKIDSTORM.secretAccessKey, ATTACKER);
  assert.equal(last.status, 429, 'the attacker’s address waits, even with the right secret');
  assert.ok(Number(last.headers.get('retry-after')) >= 1);
  assert.equal(server!.proc.exitCode, null, 'the server is alive');
  assert.equal((await fetch(`${server!.url}/health`)).status, 200);
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server!.proc.pid}/status`, 'utf8'))?.[1]) / 1024;
  assert.ok(rss < 400, `RSS ${rss} MB`);
});
