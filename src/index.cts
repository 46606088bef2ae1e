/**
 * The package's CommonJS entry point, `const { startRedrive } = require('redrive')`: the
 * server is ES modules, loaded on the first call (the same API as src/index.ts).
 */
import type { RedriveOptions, RunningRedrive } from './index.js' with { 'resolution-mode': 'import' };

export type {
  RedriveConfig,
  RedriveCredentials,
  RedriveOptions,
  RunningRedrive,
  ServerPolicyDefinition,
} from './index.js' with { 'resolution-mode': 'import' };

export async function startRedrive(options?: RedriveOptions): Promise<RunningRedrive> {
  const library = await import('./index.js');
  return library.startRedrive(options);
}
