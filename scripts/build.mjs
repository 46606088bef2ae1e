#!/usr/bin/env node
/**
 * `npm run build`, and `prepack` (so `npm pack` and `npm publish` always ship a fresh build):
 * compiles src/ into dist/src/ with tsconfig.build.json, after removing the old dist/src/,
 * so a compiled file whose source was renamed or deleted is not packed. Tests and
 * benchmarks are compiled by `npm test` and `npm run bench`, not here.
 *
 * The build runs only in a checkout (it needs the devDependency typescript). A user's
 * install of the package never runs it: the package has no install or prepare script.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.error('build: typescript is not installed; run `npm ci` in the checkout first');
  process.exit(1);
}
rmSync(new URL('../dist/src', import.meta.url), { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (run.error) throw run.error;
process.exit(run.status ?? 1);
