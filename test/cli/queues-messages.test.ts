/** `redrive queues ...`, `redrive messages ...`, --version and --help, against a running server (open). */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { attributes, counts } from '../e2e/helpers.js';
import { deadLetter } from '../e2e/dlq-helpers.js';
import { cliAt, runCli } from './support.js';

let server: ServerProcess;
let sqs: SQSClient;
let cli: ReturnType<typeof cliAt>;
const dir = mkdtempSync(join(tmpdir(), 'redrive-cli-'));
const url = (name: string) => `${server.url}/000000000000/${name}`;
const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

before(async () => {
  server = await startServerProcess({ storage: 'memory', manualClock: true });
  sqs = server.client();
  cli = cliAt(server.url);
});
after(async () => {
  await server.stop();
  server.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('--version, -V and version print the package version', async () => {
  for (const args of [['--version'], ['-V'], ['version']]) {
    const r = await runCli(args);
    assert.equal(r.stdout, `${pkg.version}\n`, args.join(' '));
  }
});

test('--help reads like a map, and every client command shows examples', async () => {
  const top = await runCli(['--help']);
  for (const g of ['serve', 'queues', 'messages', 'dlq', 'backup', 'version'])
    assert.match(top.stdout, new RegExp(`^  ${g}\\b`, 'm'), g);
  assert.match(top.stdout, /Examples:\n {2}\$ redrive serve/);
  assert.match((await runCli(['serve', '--help'])).stdout, /Examples:\n {2}\$ redrive serve\n/);
  const commands: Record<string, string[]> = {
    queues: ['list', 'create', 'show', 'set', 'purge', 'delete'],
    messages: ['send', 'peek', 'delete', 'visible', 'move', 'export', 'import', 'release-amqp'],
    dlq: ['list', 'peek', 'why', 'redrive', 'tasks', 'watch', 'cancel'],
  };
  for (const [group, names] of Object.entries(commands)) {
    const g = await runCli([group, '--help']);
    for (const n of names) assert.match(g.stdout, new RegExp(`^  ${n}\\b`, 'm'), `${group} ${n}`);
    for (const n of names) {
      const h = await runCli([group, n, '--help']);
      assert.match(
        h.stdout,
        new RegExp(`Examples:\\n {2}\\$ (\\S+=\\S+ )*(echo \\S+ \\| |cat \\S+ \\| )?redrive ${group} ${n}`),
        `${group} ${n} --help`,
      );
      assert.match(h.stdout, /--endpoint <url>[\s\S]*--profile <name>[\s\S]*--json/);
    }
  }
});

test('queues: create (with a dead-letter queue, attributes and tags), list, show, set, purge, delete', async () => {
  assert.equal((await cli('queues', 'create', 'shop-dlq')).stdout, `${url('shop-dlq')}\n`);
  const made = await cli(
    'queues',
    'create',
    'shop',
    '--dlq',
    'shop-dlq',
    '--max-receives',
    '3',
    '--attribute',
    'VisibilityTimeout=60',
    '--tag',
    'team=web',
  );
  assert.equal(made.code, 0, made.stderr);
  const a = await attributes(sqs, url('shop'));
  assert.deepEqual([a.VisibilityTimeout, JSON.parse(a.RedrivePolicy!).maxReceiveCount], ['60', 3]);
  assert.equal((await cli('queues', 'create', 'shop.fifo')).code, 0);
  assert.equal((await attributes(sqs, url('shop.fifo'))).FifoQueue, 'true', 'a .fifo name makes a FIFO queue');
  const noDlq = await cli('queues', 'create', 'x', '--max-receives', '3');
  assert.equal(noDlq.code, 1);
  assert.equal(
    noDlq.stderr,
    'redrive: --max-receives needs --dlq <queue>: the dead-letter queue a message goes to after that many receives\n',
  );
  await assert.rejects(attributes(sqs, url('x')), 'nothing was created');
  const badDlq = await cli('queues', 'create', 'x', '--dlq', 'nope');
  assert.equal(
    badDlq.stderr,
    'redrive: --dlq "nope" does not exist in this account: check the name with `redrive queues list`\n',
  );

  await cli('messages', 'send', 'shop', 'one');
  const list = await cli('queues', 'list', '--prefix', 'shop');
  assert.match(list.stdout, /^QUEUE\s+MESSAGES\s+IN FLIGHT\s+DELAYED\s+OLDEST\s+DEAD-LETTER QUEUE$/m);
  assert.match(list.stdout, /^shop\s+1\s+0\s+0\s+\d+s\s+shop-dlq$/m);
  assert.match(list.stdout, /^shop-dlq\s+0\s+0\s+0\s+-\s+-$/m);

  const show = await cli('queues', 'show', 'shop-dlq');
  assert.match(show.stdout, new RegExp(`^URL\\s+${url('shop-dlq')}$`, 'm'));
  assert.match(show.stdout, /^dead-letter queue of\s+shop$/m);
  const shown = JSON.parse((await cli('queues', 'show', 'shop', '--json')).stdout) as {
    Attributes: Record<string, string>;
    Tags: Record<string, string>;
  };
  assert.deepEqual([shown.Attributes.VisibilityTimeout, shown.Tags], ['60', { team: 'web' }]);

  assert.equal(
    (await cli('queues', 'set', 'shop', 'VisibilityTimeout=120', 'DelaySeconds=5')).stdout,
    'set VisibilityTimeout, DelaySeconds on shop\n',
  );
  assert.equal((await attributes(sqs, url('shop'))).VisibilityTimeout, '120');
  const badSet = await cli('queues', 'set', 'shop', 'VisibilityTimeout=99999');
  assert.equal(badSet.code, 1);
  assert.match(badSet.stderr, /^redrive: Invalid value for the parameter VisibilityTimeout/);

  assert.equal((await cli('queues', 'purge', 'shop')).stdout, 'purged shop\n');
  assert.equal((await counts(sqs, url('shop'))).visible, 0);
  assert.equal((await cli('queues', 'delete', 'shop.fifo')).stdout, 'deleted shop.fifo\n');
  assert.equal(
    (await cli('queues', 'show', 'shop.fifo')).stderr,
    'redrive: queue "shop.fifo" does not exist in this account: check the name with `redrive queues list`\n',
  );
});

test('messages: send (argument or stdin, attributes), peek, delete by id', async () => {
  await cli('queues', 'create', 'notes');
  const sent = await cli('messages', 'send', 'notes', 'hello', '--attribute', 'kind=greeting');
  assert.match(sent.stdout, /^[0-9a-f-]{36}\n$/);
  const piped = await runCli(['messages', 'send', 'notes', '--endpoint', server.url, '--json'], {
    input: 'from stdin\n',
  });
  const id2 = (JSON.parse(piped.stdout) as { MessageId: string }).MessageId;
  // Bytes that are not UTF-8 are refused, not sent as U+FFFD.
  const notText = await runCli(['messages', 'send', 'notes', '--endpoint', server.url], {
    input: Buffer.from([0x62, 0xff, 0xfe]),
  });
  assert.equal(notText.code, 1);
  assert.equal(
    notText.stderr,
    'redrive: the body on stdin is not UTF-8 text, which is all SQS carries: send binary data base64-encoded\n',
  );
  // No body at all (an empty stdin): the command's usage, not the API's missing-parameter text.
  const none = await runCli(['messages', 'send', 'notes', '--endpoint', server.url], { input: '' });
  assert.equal(none.code, 1);
  assert.equal(
    none.stderr,
    'redrive: no message body: give it after the queue name, or on stdin (usage: redrive messages send <queue> [body])\n',
  );
  const delay = await cli('messages', 'send', 'notes', 'x', '--delay', 'soon');
  assert.equal(delay.stderr, 'redrive: --delay "soon": give a whole number of seconds, 0 to 900\n');
  const peek = await cli('messages', 'peek', 'notes');
  assert.match(peek.stdout, /attributes: kind=greeting\n {2}body: hello\n/);
  assert.match(peek.stdout, /body: from stdin\n/);
  const del = await cli('messages', 'delete', 'notes', id2, sent.stdout.trim());
  assert.equal(del.code, 0, del.stderr);
  assert.equal(del.stdout, `deleted ${id2}\ndeleted ${sent.stdout.trim()}\n`);
  const again = await cli('messages', 'delete', 'notes', id2);
  assert.equal(again.code, 1);
  assert.equal(
    again.stderr,
    `redrive: message ${id2} is not in notes (deleted, received and deleted, redriven or expired)\n`,
  );
  assert.equal((await cli('messages', 'peek', 'notes')).stdout, 'no messages in notes\n');
});

test('export a DLQ, purge it, import the file into another queue: bodies, attributes, FIFO ids and histories come back', async () => {
  await cli('queues', 'create', 'jobs-dlq.fifo');
  await cli('queues', 'create', 'jobs.fifo', '--dlq', 'jobs-dlq.fifo', '--max-receives', '1');
  for (const [i, body] of ['{"job":1}', 'two\nlines'].entries()) {
    await cli('messages', 'send', 'jobs.fifo', body, '--group', `g${i}`, '--dedup', `d${i}`, '--attribute', `n=${i}`);
  }
  await deadLetter(sqs, url('jobs.fifo'), []);
  const file = join(dir, 'jobs.jsonl');
  const exported = await cli('messages', 'export', 'jobs-dlq.fifo', '--out', file);
  assert.equal(exported.stdout, `exported 2 messages from jobs-dlq.fifo to ${file}\n`);
  const before = JSON.parse((await cli('messages', 'peek', 'jobs-dlq.fifo', '--json')).stdout) as {
    Messages: Peeked[];
  };
  assert.equal(before.Messages.length, 2);
  assert.equal((await cli('queues', 'purge', 'jobs-dlq.fifo')).code, 0);
  await cli('queues', 'create', 'jobs-replay.fifo');
  const imported = await cli('messages', 'import', 'jobs-replay.fifo', '--in', file);
  assert.equal(imported.stdout, 'imported 2 messages into jobs-replay.fifo\n', imported.stderr);
  const afterImport = JSON.parse((await cli('messages', 'peek', 'jobs-replay.fifo', '--json')).stdout) as {
    Messages: Peeked[];
  };
  const view = (m: Peeked) => [
    m.Body,
    m.MessageAttributes,
    m.Attributes.MessageGroupId,
    m.Attributes.DeadLetterQueueSourceArn,
    m.DeathHistory,
  ];
  assert.deepEqual(afterImport.Messages.map(view), before.Messages.map(view));
  assert.ok(before.Messages[0]!.DeathHistory!.length, 'histories were there to keep');
  assert.deepEqual(
    afterImport.Messages.map((m) => m.Attributes.MessageDeduplicationId),
    before.Messages.map((m) => m.Attributes.MessageDeduplicationId),
  );

  const stdout = await cli('messages', 'export', 'jobs-replay.fifo');
  assert.deepEqual(
    stdout.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { Body: string }).Body),
    ['{"job":1}', 'two\nlines'],
  );
});

interface Peeked {
  Body: string;
  MessageAttributes?: unknown;
  DeathHistory?: unknown[];
  Attributes: Record<string, string>;
}

test('import reports the line of a bad export, after sending what came before it', async () => {
  await cli('queues', 'create', 'plain');
  const file = join(dir, 'bad.jsonl');
  writeFileSync(file, '{"Body":"ok"}\n{"Body":\n');
  const r = await cli('messages', 'import', 'plain', '--in', file);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `^redrive: ${file.replace(/[.]/g, '\\.')} line 2: not JSON \\(.*\\); 1 message before it was imported into plain, none after it\\n$`,
    ),
  );
  assert.equal((await counts(sqs, url('plain'))).visible, 1);
  const fifo = await cli('messages', 'import', 'jobs-replay.fifo', '--in', file);
  assert.match(fifo.stderr, /line 1: a FIFO queue needs a MessageGroupId, and this message has none/);
  const missing = await cli('messages', 'import', 'plain', '--in', join(dir, 'nope.jsonl'));
  assert.match(missing.stderr, /--in \S+nope\.jsonl: no such file/);
  // Bytes that are not UTF-8 stop the import there; they are never sent as U+FFFD.
  const notText = join(dir, 'not-text.jsonl');
  writeFileSync(
    notText,
    Buffer.concat([Buffer.from('{"Body":"fine"}\n{"Body":"bad'), Buffer.from([0xff]), Buffer.from('"}\n')]),
  );
  const before = (await counts(sqs, url('plain'))).visible;
  const bad = await cli('messages', 'import', 'plain', '--in', notText);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /not-text\.jsonl after line \d+: not UTF-8 text; \d+ messages? before it (was|were) imported into plain, none after it\n$/,
  );
  assert.ok((await counts(sqs, url('plain'))).visible <= before + 1, 'the bad line was not sent');
});
