import type { ConsoleRoutes } from '../console/console-routes.js';
import type { MetricsEndpoint } from '../metrics/metrics-endpoint.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import { browserLanding, isBrowserLanding } from './landing.js';
import type { ManagementApi } from './management-api.js';
import { consoleErrors, managementErrors, sqsErrors, type SubApp } from './mount.js';
import { healthAnswer, type Readiness } from './readiness.js';
import type { SqsApp } from './sqs-app.js';

/**
 * The sub-applications, by what the table calls of each: on an HTTP thread of
 * `--threads N`, stand-ins that forward to the owner thread's (src/server/threads/).
 */
export interface Mounted {
  sqs: SqsApp;
  /** Answers `GET /ready` (readiness.ts). */
  readiness: Pick<Readiness, 'check'>;
  /** The web console under /console; absent with `--console off` (everything there is a 404). */
  console?: Pick<ConsoleRoutes, 'handle'>;
  /** RabbitMQ's management API under /api/ (management-api.ts); absent: those paths are SQS's. */
  management?: Pick<ManagementApi, 'handle'>;
  /** GET /metrics (docs/monitoring.md); absent: the path is SQS's. */
  metrics?: Pick<MetricsEndpoint, 'onMainPort'>;
}

/**
 * Which sub-application serves which request, the first that matches (docs/architecture.md,
 * "The HTTP front"). The SQS API comes last and takes every request the others leave: SDKs
 * post to `/` or to a queue's URL, whatever its path.
 */
export function mountTable(m: Mounted): SubApp[] {
  const consoleOn = m.console !== undefined;
  const table: Array<SubApp | false> = [
    {
      name: 'console',
      area: 'console',
      logAs: 'console',
      errors: consoleErrors,
      matches: (req) => req.path === '/console' || req.path.startsWith('/console/'),
      handle: m.console ? (req, x) => m.console!.handle(req, x) : consoleOff,
    },
    m.management !== undefined && {
      name: 'management',
      area: 'api',
      logAs: 'http',
      errors: managementErrors,
      matches: (req) => req.path.startsWith('/api/'),
      handle: (req, x) => m.management!.handle(req, x),
    },
    {
      // Under any Host name, for load balancers and orchestrators (request-guard.ts).
      name: 'health',
      area: 'probe',
      logAs: 'http',
      errors: sqsErrors,
      matches: (req) =>
        (req.method === 'GET' || req.method === 'HEAD') && (req.path === '/health' || req.path === '/ready'),
      handle: (req) => healthAnswer(req.path, m.readiness),
    },
    m.metrics !== undefined && {
      // Host and cross-site checks; the unsigned-form rule is for SQS actions, and /metrics takes none.
      name: 'metrics',
      area: 'api',
      logAs: 'http',
      errors: sqsErrors,
      matches: (req) => req.path === '/metrics',
      handle: (req, x) => m.metrics!.onMainPort(req, x.client),
    },
    {
      name: 'landing',
      area: 'sqs',
      logAs: 'http',
      errors: sqsErrors,
      matches: isBrowserLanding,
      handle: () => browserLanding(consoleOn),
    },
    m.sqs,
  ];
  return table.filter((app): app is SubApp => app !== false);
}

const consoleOff = (): WireResponse => ({
  status: 404,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: 'Not found',
});

/** The sub-application that serves a request: the first of the table that matches it. */
export function mountOf(table: SubApp[], req: WireRequest): SubApp {
  for (const app of table) if (app.matches(req)) return app;
  throw new Error(
    `no sub-application serves ${req.method} ${req.path}: the table must end with one that serves every request`,
  );
}
