import { readFileSync } from 'node:fs';

/** The version in package.json, two levels above the built file (dist/src/cli) and the source alike. */
export function version(): string {
  for (const up of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'redrive' && pkg.version) return pkg.version;
    } catch {
      // try the next
    }
  }
  return 'unknown';
}
