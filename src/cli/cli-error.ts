/**
 * An error a person can act on: `message` says what is wrong, naming the queue or flag,
 * and what to do. `code` and `action` keep the API's words for --verbose and --json.
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code?: string;
  readonly action?: string;
  /** The API's own message, or the underlying error's. */
  readonly detail?: string;
  constructor(message: string, o: { code?: string; action?: string; detail?: string } = {}) {
    super(message);
    this.code = o.code;
    this.action = o.action;
    this.detail = o.detail;
  }
}

/** A failed SQS call, as the server answered it. */
export class SqsCallError extends CliError {
  constructor(
    override readonly action: string,
    override readonly code: string,
    readonly apiMessage: string,
    readonly status: number,
  ) {
    super(apiMessage, { code, action, detail: apiMessage });
  }
}

export const isMissingQueue = (e: unknown): e is SqsCallError =>
  e instanceof SqsCallError && /NonExistentQueue|QueueDoesNotExist/.test(e.code);

/** Prints an error for a person (stderr), or as JSON with --json; sets the exit code. */
export function reportError(e: unknown, o: { json?: boolean; verbose?: boolean }): void {
  const err = e instanceof CliError ? e : undefined;
  const message = err ? err.message : e instanceof Error ? e.message : String(e);
  if (o.json) {
    const out: Record<string, unknown> = { message };
    if (err?.code) out.code = err.code;
    if (err?.action) out.action = err.action;
    if (err?.detail && err.detail !== message) out.detail = err.detail;
    process.stderr.write(`${JSON.stringify({ error: out })}\n`);
  } else {
    process.stderr.write(`redrive: ${message}\n`);
    if (o.verbose && err && (err.code || err.detail)) {
      process.stderr.write(
        `  (${[err.action, err.code].filter(Boolean).join(': ')}${err.detail && err.detail !== message ? `: ${err.detail}` : ''})\n`,
      );
    }
    if (o.verbose && !err && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
  }
  process.exitCode = 1;
}
