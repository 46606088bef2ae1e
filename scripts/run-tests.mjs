#!/usr/bin/env node
/**
 * Runs the compiled test files, and only those: each `*.test.ts` under test/, as its
 * `*.test.js` under dist/test/. Given a directory, `node --test` would run every .js file
 * under a folder named `test`, so each helper module (harness, support, cases, ...)
 * would count as a passing test; and Node 20 has no globs in `--test`.
 *
 * The list comes from the sources, so a stale compiled test whose source was renamed or
 * deleted is not run. Extra arguments (`npm test -- --test-name-pattern=fifo`) go to
 * node before the file list; test files among them (`npm test -- test/e2e/queues.test.ts`)
 * run alone.
 *
 * Before that, scripts/preflight.mjs checks the services and programs the tests drive
 * (PostgreSQL, the AWS CLI, boto3, pika, promtool, Chromium, a C++ toolchain, RabbitMQ)
 * and stops with one line per missing one; outside CI, the tests of a missing client that
 * is not an npm package skip instead, and the run ends by naming each such group, how many
 * tests it holds and how to enable it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reportPreflight } from './preflight.mjs';
import { SKIP_GROUPS } from './skip-groups.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every *.test.ts below `dir`, as paths relative to the repository, in a stable order. */
function testSources(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testSources(path));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found.sort();
}

// Test files named among the arguments (`npm test -- test/e2e/queues.test.ts`) run alone.
const named = process.argv
  .slice(2)
  .filter((a) => /\.test\.ts$/.test(a))
  .map((a) => relative(root, join(process.cwd(), a)));
/**
 * The files that take longest start first, so that they run beside the many short ones
 * instead of holding the end of the run alone (each took 1–8 minutes of a 2-core CI
 * machine: the packed install compiles better-sqlite3 on Node 20; the scenarios drive the
 * AWS CLI and boto3 processes; the soak and crash loop run for a set time), then the fault
 * tests that wait out stalls and restarts (40-65 s each, run alone on a loaded machine: the
 * full disk, PostgreSQL's faults and its failover). The rest keep their order; the overload
 * test (about 35 s) among them, as its latency bar should not meet the install's compile.
 */
const SLOW_FIRST = [
  'test/packaging/install.test.ts',
  'test/reliability/soak.test.ts',
  'test/reliability/crash-loop.test.ts',
  'test/query/aws-cli.test.ts',
  'test/query/boto3.test.ts',
  'test/cli/queues-messages.test.ts',
  'test/e2e/regions.test.ts',
  'test/reliability/disk-full.test.ts',
  'test/postgres/db-faults.test.ts',
  'test/postgres/failover.test.ts',
  'test/e2e/threads.test.ts',
];
const rank = (source) => (SLOW_FIRST.includes(source) ? SLOW_FIRST.indexOf(source) : SLOW_FIRST.length);
const sources = (named.length > 0 ? named : testSources(join(root, 'test')))
  .map((source, i) => ({ source, i }))
  .sort((a, b) => rank(a.source) - rank(b.source) || a.i - b.i)
  .map(({ source }) => source);
const compiled = (source) => join('dist', source.replace(/\.ts$/, '.js'));
const files = sources.map(compiled);
const missing = files.filter((file) => !existsSync(join(root, file)));
if (files.length === 0 || missing.length > 0) {
  console.error(
    files.length === 0
      ? 'run-tests: no test/**/*.test.ts found'
      : `run-tests: not compiled (run tsc -p tsconfig.json): ${missing.join(', ')}`,
  );
  process.exit(1);
}

const ready = await reportPreflight();
if (!ready) process.exit(1);
const { skips } = ready;
// The AWS SDK's NodeVersionSupportWarning (Node 20) is about the SDK's future, not this
// project: its own switch turns it off in every test process and the servers they start.
const env = {
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  ...process.env,
  REDRIVE_TEST_SKIP: skips.join(','),
};
// No PostgreSQL to use (outside CI): one of the run's own, as the fault tests start theirs.
let ownPostgres;
if (ready.ownPostgres) {
  const { startOwnPostgres } = await import(pathToFileURL(join(root, 'dist/test/support/own-postgres.js')).href);
  try {
    ownPostgres = await startOwnPostgres();
  } catch (e) {
    console.error(
      `npm test needs PostgreSQL: none at 127.0.0.1:5432, and none could be started (${e.message.trim()}); start one, or set REDRIVE_TEST_POSTGRES_URL. No test was run.`,
    );
    process.exit(1);
  }
  env.REDRIVE_TEST_POSTGRES_URL = ownPostgres.url();
  console.error(`npm test: a PostgreSQL of this run's own at ${env.REDRIVE_TEST_POSTGRES_URL}`);
  // Stopped whatever ends the run.
  process.once('exit', () => ownPostgres.destroy());
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));
}

const extra = process.argv.slice(2).filter((a) => !/\.test\.ts$/.test(a));
// `spec` prints each test as it ends (TAP, the default off a terminal, is for machines);
// the files run side by side, and a file's lines come once the files before it are done.
const reporter = extra.some((a) => a.startsWith('--test-reporter')) ? [] : ['--test-reporter=spec'];
// Four files at a time on any machine: the suite waits more than it computes (servers
// starting, clients spawned, timers), so on 2 cores it used about 0.7 of a core at three
// files at a time, and five at a time passed under a load average of 15.
const concurrency = extra.some((a) => a.startsWith('--test-concurrency'))
  ? []
  : [`--test-concurrency=${process.env.REDRIVE_TEST_CONCURRENCY || 4}`];
// Beside the chosen reporter, one that counts the tests skipped for a missing client.
const countsDir = mkdtempSync(join(tmpdir(), 'redrive-run-'));
const skipReporter = (counted) =>
  reporter.length === 0
    ? []
    : [
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(root, 'scripts/skipped-groups.mjs')}`,
        `--test-reporter-destination=${counted}`,
      ];
// A test (or a test file: the limit applies to each file's run as a whole too) that hangs
// fails after 30 minutes instead of holding the run for ever.
const timeout = extra.some((a) => a.startsWith('--test-timeout')) ? [] : ['--test-timeout=1800000'];
/**
 * The hostile-tenant tests measure how a bystander account is served while another
 * attacks, against a latency bar: beside three other files on a 2-core machine they would
 * measure the machine instead. They run after the others, one file at a time. They are the
 * files that import the harness (test/support/hostile-tenant.ts); the other files of
 * test/security measure no latency and run with the rest.
 */
const measuresLatency = new Set(
  sources
    .filter((source) => /from '\.\.\/support\/hostile-tenant\.js'/.test(readFileSync(join(root, source), 'utf8')))
    .map(compiled),
);
const alone = (file) => measuresLatency.has(file);
const runs = [
  { files: files.filter((f) => !alone(f)), concurrency },
  { files: files.filter(alone), concurrency: concurrency.length > 0 ? ['--test-concurrency=1'] : [] },
].filter((r) => r.files.length > 0);
let run;
const counts = { groups: {}, others: [] };
for (const [i, { files: list, concurrency: c }] of runs.entries()) {
  const counted = join(countsDir, `skipped-${i}.json`);
  const args = [
    '--enable-source-maps',
    '--test',
    ...reporter,
    ...skipReporter(counted),
    ...c,
    ...timeout,
    ...extra,
    ...list,
  ];
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env });
  if (r.error) throw r.error;
  try {
    const these = JSON.parse(readFileSync(counted, 'utf8'));
    for (const [id, n] of Object.entries(these.groups)) counts.groups[id] = (counts.groups[id] ?? 0) + n;
    counts.others.push(...these.others);
  } catch {
    // No count (the run ended early, or another reporter was chosen): the groups are still named.
  }
  // The first failure decides the exit; a later run still runs, so one failure hides no other.
  if (!run || (run.status === 0 && !run.signal)) run = r;
  if (r.signal) break;
  if (runs.length > 1 && i === 0) console.log(`\nrun-tests: now the ${runs[1].files.length} files that run alone`);
}
if (skips.length > 0) {
  console.log(`\nSkipped, for want of a client that is not an npm package (CI=true runs them all):`);
  for (const id of skips) {
    const n = counts.groups[id] ?? 0;
    console.log(
      `  ${id}: ${n} test${n === 1 ? ' needs' : 's need'} ${SKIP_GROUPS[id].what}; to run ${n === 1 ? 'it' : 'them'}: ${SKIP_GROUPS[id].enable}`,
    );
  }
}
// Off CI, the tests that skipped for another reason (a privilege, a platform, a storage
// choice) are listed too, so that a run on a bare machine says everything it left out.
if (counts.others.length > 0 && process.env.CI !== 'true') {
  console.log(`\nSkipped for other reasons, each saying why:`);
  for (const { file, name, reason } of counts.others)
    console.log(`  ${file}: ${name}: ${reason || '(no reason given)'}`);
}
rmSync(countsDir, { recursive: true, force: true });
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
