/**
 * An install whose better-sqlite3 has no native build (its install script was skipped on
 * Node 20): `redrive serve` must say so in one line and exit 1, not print the bindings
 * module's stack of every path it tried. The install is imitated by a copy of the built
 * code next to a node_modules whose better-sqlite3 has everything but its `.node` files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3';
const work = mkdtempSync(join(tmpdir(), 'redrive-no-sqlite-'));
after(() => rmSync(work, { recursive: true, force: true }));

function installWithoutSqliteBuild(): string {
  cpSync(join(ROOT, 'dist/src'), join(work, 'dist/src'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(work, 'package.json'));
  const modules = realpathSync(join(ROOT, 'node_modules'));
  mkdirSync(join(work, 'node_modules'));
  for (const name of readdirSync(modules)) {
    if (name === DRIVER) continue;
    symlinkSync(join(modules, name), join(work, 'node_modules', name));
  }
  cpSync(join(modules, DRIVER), join(work, 'node_modules', DRIVER), {
    recursive: true,
    filter: (path) => !path.endsWith('.node'),
  });
  return join(work, 'dist/src/cli/index.js');
}

test('redrive serve without a native SQLite build says so in one line and exits 1', () => {
  const cli = installWithoutSqliteBuild();
  const run = spawnSync(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', join(work, 'data')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 1, run.stderr);
  const lines = `${run.stdout}${run.stderr}`.trim().split('\n');
  assert.equal(lines.length, 1, `one line, not:\n${lines.join('\n')}`);
  const entry = JSON.parse(lines[0]!) as { level: number; msg: string; err?: unknown };
  assert.equal(entry.err, undefined, 'no error object with a stack');
  assert.match(entry.msg, /SQLite is not available on Node v\d+\S*: better-sqlite3 1\d did not load \(\w/);
  assert.doesNotMatch(entry.msg, /\n|→/);
});
