/**
 * Shared parts of the reliability proofs: a raw SQS JSON client over fetch (no SDK
 * retries, so every answer is the server's own), the proof's length (short in CI, long
 * with REDRIVE_PROOF=long or `--long`), /proc sampling of the server and the summary line.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const ACCOUNT = '000000000000';
export const arn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;
export const queueUrl = (base: string, name: string) => `${base}/${ACCOUNT}/${name}`;

/** `long` for the manual runs: REDRIVE_PROOF=long or a `--long` argument. */
export const longProof = process.env.REDRIVE_PROOF === 'long' || process.argv.includes('--long');

/** Picks the CI or the manual value; REDRIVE_PROOF_<NAME> overrides both. */
export function setting(name: string, ci: number, long: number): number {
  const env = process.env[`REDRIVE_PROOF_${name.toUpperCase()}`];
  return env !== undefined ? Number(env) : longProof ? long : ci;
}

export interface SqsAnswer<T = Record<string, any>> {
  /** HTTP status; 0 when no answer came (connection refused or reset, timeout). */
  status: number;
  body?: T;
  /** The SQS error type (`__type` without its namespace) of a non-2xx answer. */
  errorType?: string;
  /** The network error of a request that got no answer. */
  networkError?: string;
  ms: number;
}

/** One SQS JSON 1.0 call. Never throws: a request the server never answered has status 0. */
export async function sqs<T = Record<string, any>>(
  base: string,
  action: string,
  input: object,
  timeoutMs = 30_000,
): Promise<SqsAnswer<T>> {
  const started = performance.now();
  try {
    const res = await fetch(`${base}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let body: any;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      return { status: res.status, errorType: `unparseable body: ${text.slice(0, 80)}`, ms };
    }
    if (res.ok) return { status: res.status, body, ms };
    return { status: res.status, body, errorType: String(body.__type ?? 'no __type').replace(/^.*#/, ''), ms };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    return {
      status: 0,
      networkError: err.cause?.code ?? err.cause?.message ?? err.name,
      ms: performance.now() - started,
    };
  }
}

/** Like `sqs`, but throws unless the call succeeded: for set-up and final checks. */
export async function must<T = Record<string, any>>(base: string, action: string, input: object): Promise<T> {
  const a = await sqs<T>(base, action, input);
  if (a.status !== 200)
    throw new Error(`${action} failed: ${a.status} ${a.errorType ?? a.networkError} ${JSON.stringify(a.body)}`);
  return a.body!;
}

export interface PeekedMessage {
  MessageId: string;
  Body: string;
  State: string;
}

/** Every message of a queue, in flight or not, through the PeekMessages extension. */
export async function peekAll(base: string, name: string): Promise<PeekedMessage[]> {
  const out: PeekedMessage[] = [];
  let NextToken: string | undefined;
  do {
    const page = await must<{ Messages: PeekedMessage[]; NextToken?: string }>(base, 'PeekMessages', {
      QueueUrl: queueUrl(base, name),
      MaxResults: 100,
      ...(NextToken ? { NextToken } : {}),
    });
    out.push(...page.Messages);
    NextToken = page.NextToken;
  } while (NextToken);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ProcessSample {
  rssKb: number;
  fds: number;
}

/** The server's resident memory and open file descriptors, from /proc. */
export function sampleProcess(pid: number): ProcessSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { rssKb, fds: readdirSync(`/proc/${pid}/fd`).length };
}

export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The final line every proof prints: `<proof> key=value ...`, counts first. */
export function summary(proof: string, fields: Record<string, number | string>): string {
  const line = `${proof} ${Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v}`)
    .join(' ')}`;
  console.log(line);
  return line;
}
