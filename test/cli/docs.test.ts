/**
 * docs/cli.md's walk-through runs as written: each ```sh block, in order, against a real
 * server, prints what the ```text block after it shows, ids, times and ages aside.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { CLI } from './support.js';

const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
const start = doc.indexOf('## A walk through');
const walk = doc.slice(start, doc.indexOf('\n## ', start + 1));
const steps = [...walk.matchAll(/```sh\n([\s\S]*?)```\s*(?:```text\n([\s\S]*?)```)?/g)].map((m) => ({
  commands: m[1]!,
  expected: m[2] ?? '',
}));

let server: ServerProcess;
useServerProcess({ storage: 'memory' }, (s) => (server = s));
const dir = mkdtempSync(join(tmpdir(), 'redrive-cli-doc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * What varies from run to run: ids, times, ages, paging tokens, and column widths with
 * them; and how many progress lines `--watch` prints before a task ends (as many as its
 * polls find it still running).
 */
function normal(text: string): string {
  return text
    .replace(/^RUNNING +moved .*\n/gm, '')
    .replaceAll(server.url, 'http://127.0.0.1:9324')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/task [0-9a-f]{8}/g, 'task <task>')
    .replace(/--from \S+/g, '--from <token>')
    .replace(/ \d+s /g, ' <age> ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

test('the walk-through of docs/cli.md runs as written and prints what it shows', () => {
  assert.ok(steps.length >= 10, `found ${steps.length} steps`);
  writeFileSync(join(dir, 'redrive'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(dir, 'redrive'), 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dir}:${process.env.PATH}`,
    REDRIVE_ENDPOINT: server.url,
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    AWS_CONFIG_FILE: join(dir, 'none'),
  };
  for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_PROFILE']) delete env[key];
  for (const step of steps) {
    let output = '';
    for (const command of step.commands.trim().split('\n')) {
      const r = spawnSync('sh', ['-c', command.replaceAll('http://127.0.0.1:9324', server.url)], {
        cwd: dir,
        env,
        encoding: 'utf8',
      });
      // An example that shows an error exits with 1; every other one succeeds.
      assert.equal(r.status, /^redrive: /m.test(r.stderr) ? 1 : 0, `${command}\n${r.stderr}`);
      output += r.stdout + r.stderr;
    }
    assert.equal(normal(output), normal(step.expected), step.commands);
  }
});

test("docs/cli.md's summary and the README name every command of each group, as --help lists them", () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  for (const group of ['queues', 'messages', 'dlq']) {
    const help = spawnSync(process.execPath, [CLI, group, '--help'], { encoding: 'utf8' }).stdout;
    const commands = [...help.split('Commands:')[1]!.matchAll(/^ {2}([a-z-]+)\b/gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help');
    const listed = (text: string) =>
      new RegExp(`redrive ${group} +([a-z-]+(?: \\| [a-z-]+)+)`).exec(text)?.[1]?.split(' | ') ?? [];
    assert.deepEqual(listed(doc).sort(), [...commands].sort(), `docs/cli.md: redrive ${group}`);
    assert.deepEqual(listed(readme.replace(/`\n\s*`?/g, ' ')).sort(), [...commands].sort(), `README: redrive ${group}`);
  }
});
