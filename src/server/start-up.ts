import { accessSync, constants, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { isRegionName } from '../engine/kernel/addressing.js';
import { loadCredentials, type Credentials } from '../auth/credentials.js';

/**
 * Checks of `redrive serve`'s input that run before anything is created on disk or
 * opened: each failure is a StartupError, one line naming the flag or file and saying
 * what to do, which the CLI logs as the server's other logs and exits non-zero on.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

const uid = () => process.getuid?.() ?? '?';

/** `--port`: a whole number from 0 to 65535 (0 picks a free port). */
export function parsePort(raw: string | number, flag = '--port'): number {
  const text = String(raw);
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new StartupError(
      `${flag} ${JSON.stringify(text)}: must be a whole number from 0 to 65535 (0 picks a free port)`,
    );
  }
  return Number(text);
}

/** More HTTP threads than this is a typo, not a machine: each thread costs its own heap. */
export const MAX_THREADS = 256;

/** `--threads`: a whole number from 1 to MAX_THREADS. */
export function checkThreads(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_THREADS)
    throw new StartupError(`--threads ${JSON.stringify(String(n))}: must be a whole number from 1 to ${MAX_THREADS}`);
}

/** `--region` ends up in queue ARNs, so it must be a region name (addressing.ts). */
export function checkRegion(region: string): void {
  if (!isRegionName(region)) {
    throw new StartupError(
      `--region ${JSON.stringify(region)}: must be a region name such as us-east-1 (lowercase letters, digits and hyphens)`,
    );
  }
}

/** `--account-id`: 12 digits, as in queue URLs and ARNs. */
export function checkAccountId(accountId: string): void {
  if (!/^\d{12}$/.test(accountId)) {
    throw new StartupError(`--account-id ${JSON.stringify(accountId)}: must be 12 digits, such as 000000000000`);
  }
}

/** Why this user cannot read and write in `dir` (an errno code), or undefined when it can. */
const refusal = (dir: string): string | undefined => {
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'EACCES';
  }
};

/**
 * `--data-dir` for the SQLite store: a directory this user can read and write, or one
 * it can create (its nearest existing parent is a writable directory). Nothing is
 * created here; the store creates it once every check has passed.
 */
export function checkDataDir(dir: string): void {
  const flag = `--data-dir ${dir}`;
  let at = resolve(dir);
  for (;;) {
    let kind: 'dir' | 'other' | undefined;
    try {
      kind = statSync(at).isDirectory() ? 'dir' : 'other';
    } catch (e) {
      // Missing, or under a file (ENOTDIR): the loop goes up to what is there.
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        throw new StartupError(
          `${flag}: cannot be read (${code}): make it readable and writable by the user running Redrive (uid ${uid()})`,
          { cause: e },
        );
    }
    if (kind === 'other') {
      throw new StartupError(
        at === resolve(dir)
          ? `${flag}: is a file, not a directory: give a directory (it is created if missing)`
          : `${flag}: cannot be created, ${at} is a file: give a path under a directory`,
      );
    }
    if (kind === 'dir') {
      const code = refusal(at);
      if (code === 'EROFS') {
        throw new StartupError(
          `${flag}: ${at} is on a read-only file system: remount it read-write, or give another directory`,
        );
      }
      if (code) {
        throw new StartupError(
          at === resolve(dir)
            ? `${flag}: cannot be read and written by the user running Redrive (uid ${uid()}): fix its permissions, or give another directory`
            : `${flag}: cannot be created, ${at} is not writable by the user running Redrive (uid ${uid()}): create it, or give another directory`,
        );
      }
      return;
    }
    at = dirname(at);
  }
}

/** The line of an error from listening on `host:port`, or undefined for one it does not know. */
export function listenError(e: unknown, host: string, port: number, flag = '--port'): StartupError | undefined {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new StartupError(
      `${flag} ${port}: ${where} is already in use (another Redrive server?): stop what uses it, or give another ${flag} (0 picks a free one)`,
      { cause: e },
    );
  }
  if (code === 'EACCES') {
    return new StartupError(
      `${flag} ${port}: not allowed to listen on ${where} (ports below 1024 need privileges): give a port from 1024 up`,
      { cause: e },
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new StartupError(
      `--host ${host}: cannot listen on this address (${code}): give an address of this machine, such as 127.0.0.1 or 0.0.0.0`,
      { cause: e },
    );
  }
  return undefined;
}

/**
 * Binds the port and lets it go again, so a port in use (or a --host that is not an
 * address of this machine) is found before the data directory is created. The server binds
 * it for good only after opening the store; a port taken in between gets the same line
 * from listenError.
 */
export async function checkPortFree(host: string, port: number, flag = '--port'): Promise<void> {
  // Port 0 too: it checks --host.
  const probe = createServer();
  await new Promise<void>((done, fail) => {
    probe.once('error', (e) => fail(listenError(e, host, port, flag) ?? e));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => done()));
  });
}

const CREDENTIALS_SHAPE = '{"<access key id>": {"secretAccessKey": "...", "accountId": "<12 digits>"}}';

/** `--credentials`: any failure is one line naming the flag, the file and what it must hold. */
export function readCredentials(path: string): Credentials {
  let credentials: Credentials;
  try {
    credentials = loadCredentials(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code
      ? `cannot read it (${err.code})`
      : err instanceof SyntaxError
        ? `not valid JSON (${err.message})`
        : err.message;
    throw new StartupError(`--credentials ${path}: ${why}: give a JSON file of access keys, ${CREDENTIALS_SHAPE}`, {
      cause: e,
    });
  }
  // No key would sign nothing in: a server nobody can use is a mistake, not a lockdown.
  if (credentials.size === 0)
    throw new StartupError(
      `--credentials ${path}: holds no access keys, so no request could be signed: add at least one, ${CREDENTIALS_SHAPE}`,
    );
  return credentials;
}
