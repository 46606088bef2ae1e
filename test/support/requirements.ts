/**
 * Tests whose real client is not an npm package skip outside CI when it is missing
 * (scripts/skip-groups.mjs): scripts/preflight.mjs names the missing groups in
 * REDRIVE_TEST_SKIP, and the reason ends with the group's tag, so the run's last lines
 * can count them. Under CI=true nothing is in REDRIVE_TEST_SKIP.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';

export type SkipGroup = 'aws-cli' | 'boto3' | 'pika' | 'celery' | 'proton' | 'promtool' | 'chromium' | 'rabbitmq';

// The scripts' own table, from the checkout (tests run compiled, from dist/test/).
const table = fileURLToPath(new URL('../../../scripts/skip-groups.mjs', import.meta.url));
const { SKIP_GROUPS, tag } = (await import(pathToFileURL(table).href)) as {
  SKIP_GROUPS: Record<SkipGroup, { what: string; enable: string }>;
  tag: (group: SkipGroup) => string;
};

const skipped = new Set((process.env.REDRIVE_TEST_SKIP ?? '').split(',').filter(Boolean));

/** The reason a test of `group` skips with: what it needs, how to enable it, and the tag. */
export function skipReason(group: SkipGroup, why = `${SKIP_GROUPS[group].what} is missing`): string {
  return `${why}; to run it: ${SKIP_GROUPS[group].enable} ${tag(group)}`;
}

/** Test options: `test(name, needs('aws-cli'), fn)` skips when the AWS CLI is missing (never under CI). */
export function needs(...groups: SkipGroup[]): { skip?: string } {
  const missing = groups.find((g) => skipped.has(g));
  return missing ? { skip: skipReason(missing) } : {};
}
