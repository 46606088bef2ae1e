/** Runs the built `redrive` CLI as a child process, with an environment of the test's choosing. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Variables on top of a clean environment: no AWS_* or REDRIVE_* of the machine, and no ~/.aws files. */
  env?: Record<string, string>;
  input?: string | Buffer;
}

/** A temporary directory holding the AWS config and credentials files a test writes. */
export class AwsFiles {
  readonly dir = mkdtempSync(join(tmpdir(), 'redrive-cli-aws-'));
  readonly config = join(this.dir, 'config');
  readonly credentials = join(this.dir, 'credentials');
  write(credentials: string, config = ''): this {
    writeFileSync(this.credentials, credentials);
    writeFileSync(this.config, config);
    return this;
  }
  env(): Record<string, string> {
    return { AWS_SHARED_CREDENTIALS_FILE: this.credentials, AWS_CONFIG_FILE: this.config };
  }
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const noFiles = new AwsFiles();
process.on('exit', () => noFiles.cleanup());

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(AWS_|REDRIVE_)/.test(k)) env[k] = v;
  return { ...env, ...noFiles.env(), ...extra };
}

export function startCli(args: string[], opts: CliOptions = {}): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { env: cleanEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
}

export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const child = startCli(args, opts);
  return finished(child, opts.input);
}

export function finished(child: ChildProcess, input?: string | Buffer): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdin!.end(input ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** The CLI against one endpoint: `cli('dlq', 'list')`. */
export const cliAt =
  (endpoint: string, env: Record<string, string> = {}) =>
  (...args: string[]) =>
    runCli([...args, '--endpoint', endpoint], { env });
