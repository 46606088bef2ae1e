/**
 * The package's entry point, `import { startRedrive } from 'redrive'`: everything exported
 * here is the public API, under semver (docs/library.md). The rest of the package is private.
 */
export { startRedrive } from './library/start-redrive.js';
export type { RedriveConfig, RedriveCredentials, RedriveOptions, RunningRedrive } from './library/start-redrive.js';
export type { ServerPolicyDefinition } from './engine/policies/server-policies.js';
