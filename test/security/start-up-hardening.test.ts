/**
 * What `redrive serve` does at start to be safe by construction: a credentials file whose
 * entries could not be a key (an empty id or secret, a name a plain object resolves to its
 * prototype) is refused with one line naming the file and the entry, and the intrinsics
 * every object inherits from are made non-extensible before a client is read, so a
 * pollution cannot add a property to them (while a program that embeds the server keeps
 * its own).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startRedrive } from '../../src/library/start-redrive.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

function run(args: string[], opts: { cwd?: string; preload?: string } = {}) {
  const pre = opts.preload ? ['--import', `data:text/javascript,${encodeURIComponent(opts.preload)}`] : [];
  const proc = spawn(process.execPath, [...pre, CLI, 'serve', ...args], { cwd: opts.cwd, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const GOOD = { secretAccessKey: 'a-secret', accountId: '111111111111' };

test('a credentials entry that cannot be a key is refused at start, naming the file and the entry', async () => {
  const cases: [string, unknown, RegExp][] = [
    ['""', { '': GOOD }, /^--credentials keys\.json: an access key id is empty/],
    ['__proto__', JSON.parse('{"__proto__": {"secretAccessKey": "s", "accountId": "111111111111"}}'), /"__proto__"/],
    ['constructor', { constructor: GOOD }, /^--credentials keys\.json: access key id "constructor" is a reserved name/],
    ['prototype', { prototype: GOOD }, /access key id "prototype" is a reserved name/],
    [
      'empty secret',
      { AKIDEMPTY: { secretAccessKey: '', accountId: '111111111111' } },
      /^--credentials keys\.json: AKIDEMPTY has an empty secretAccessKey/,
    ],
  ];
  for (const [what, keys, line] of cases) {
    const cwd = mkdtempSync(join(tmpdir(), 'redrive-credentials-'));
    // A good key beside the bad one: the bad entry alone is what is refused.
    writeFileSync(join(cwd, 'keys.json'), JSON.stringify({ AKIDGOOD: GOOD, ...(keys as object) }));
    if (what === '__proto__') {
      writeFileSync(
        join(cwd, 'keys.json'),
        `{"AKIDGOOD": ${JSON.stringify(GOOD)}, "__proto__": ${JSON.stringify(GOOD)}}`,
      );
    }
    const r = await run(['--port', '0', '--storage', 'memory', '--credentials', 'keys.json'], { cwd });
    assert.equal(r.code, 1, `${what}: exit code; output:\n${r.stdout}${r.stderr}`);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `${what}: one line, got:\n${r.stdout}`);
    assert.match((JSON.parse(lines[0]!) as { msg: string }).msg, line, what);
  }
});

test('redrive serve makes Object.prototype, Array.prototype and Function.prototype non-extensible before it serves', async () => {
  // Runs in the server's process: reports the intrinsics once they are closed (or after 15 s), then ends it.
  const preload = `
    const started = Date.now();
    const check = setInterval(() => {
      if (Object.isExtensible(Object.prototype) && Date.now() - started < 15000) return;
      clearInterval(check);
      const closed = [Object.prototype, Array.prototype, Function.prototype].map((o) => !Object.isExtensible(o));
      let polluted = false;
      try { ({}).__proto__.polluted = true; } catch {}
      polluted = Object.prototype.polluted === true;
      process.stderr.write('INTRINSICS ' + JSON.stringify({ closed, polluted }) + '\\n');
      process.exit(0);
    }, 20);`;
  const r = await run(['--port', '0', '--storage', 'memory', '--log-level', 'info'], { preload });
  const line = /INTRINSICS (.*)/.exec(r.stderr)?.[1];
  assert.ok(line, `the server started and reported; output:\n${r.stdout}${r.stderr}`);
  assert.deepEqual(JSON.parse(line), { closed: [true, true, true], polluted: false });
});

test('with the intrinsics closed, config-file maps keyed like Object.prototype members still load', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-closed-config-'));
  const names = ['toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__'];
  const yaml = `queues:\n  - name: q\n    tags: { ${names.map((n) => `${n}: v`).join(', ')} }\n    attributes: { VisibilityTimeout: 5 }\n`;
  writeFileSync(join(dir, 'redrive.yaml'), yaml);
  writeFileSync(
    join(dir, 'redrive.json'),
    JSON.stringify({ queues: [{ name: 'q', tags: JSON.parse(`{${names.map((n) => `"${n}": "v"`).join(',')}}`) }] }),
  );
  const module = new URL('../../src/server/config-file.js', import.meta.url).href;
  const script = `
    import { closeIntrinsics } from ${JSON.stringify(new URL('../../src/server/closed-intrinsics.js', import.meta.url).href)};
    closeIntrinsics();
    const { loadConfigFile } = await import(${JSON.stringify(module)});
    for (const f of ['redrive.yaml', 'redrive.json']) {
      const c = await loadConfigFile(${JSON.stringify(dir)} + '/' + f);
      process.stdout.write(JSON.stringify(Object.keys(c.queues[0].tags)) + '\\n');
    }`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'pipe' });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => proc.on('close', r));
  assert.equal(code, 0, err);
  assert.deepEqual(
    out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    [names, names],
  );
});

test('startRedrive, embedded in a program, leaves that program its own intrinsics', async () => {
  const running = await startRedrive({ storage: 'memory' });
  try {
    assert.equal(Object.isExtensible(Object.prototype), true);
    assert.equal(Object.isExtensible(Array.prototype), true);
  } finally {
    await running.close();
  }
});
