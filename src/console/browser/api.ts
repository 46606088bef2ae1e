/**
 * The console calls the SQS JSON protocol and Redrive's documented extensions, exactly as
 * any client would, on `POST /console/api`: the server passes these requests to the same
 * adapter as `POST /`, acting as the signed-in account.
 */
import type { Death, DeathSummary, PeekedMessage } from '../../wire/messages.js';

export type { Death, DeathSummary, PeekedMessage };

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * The region the page is about: `?region=` in its address, set by the overview's links to
 * another region's queues (docs/console.md); the server's default region otherwise.
 */
export const pageRegion = (): string | null => new URLSearchParams(location.search).get('region');

const csrf = (): string => document.querySelector<HTMLMetaElement>('meta[name="redrive-csrf"]')?.content ?? '';

export async function call<T = Record<string, unknown>>(
  action: string,
  input: Record<string, unknown> = {},
): Promise<T> {
  const res = await fetch('/console/api', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
      'x-redrive-csrf': csrf(),
      ...(pageRegion() ? { 'x-redrive-region': pageRegion()! } : {}),
    },
    body: JSON.stringify(input),
    credentials: 'same-origin',
  });
  if (res.status === 401) {
    location.assign(`/console/sign-in?next=${encodeURIComponent(location.pathname)}`);
    throw new ApiError('AccessDenied', 'Signed out.', 401);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const type = String(body.__type ?? 'InternalFailure');
    throw new ApiError(type.slice(type.indexOf('#') + 1), String(body.message ?? res.statusText), res.status);
  }
  return body as T;
}

export async function queueUrl(name: string): Promise<string> {
  return (await call<{ QueueUrl: string }>('GetQueueUrl', { QueueName: name })).QueueUrl;
}

export type Attributes = Record<string, string>;

export async function queueAttributes(url: string): Promise<Attributes> {
  return (
    (await call<{ Attributes?: Attributes }>('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] }))
      .Attributes ?? {}
  );
}

/** Follows NextToken through every page of a listing. */
async function allPages<P extends { NextToken?: string }>(
  action: string,
  input: Record<string, unknown>,
  items: (page: P) => string[] | undefined,
): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await call<P>(action, { ...input, MaxResults: 1000, NextToken: token });
    out.push(...(items(page) ?? []));
    token = page.NextToken;
  } while (token);
  return out;
}

export const deadLetterSources = (url: string) =>
  allPages<{ queueUrls?: string[]; NextToken?: string }>(
    'ListDeadLetterSourceQueues',
    { QueueUrl: url },
    (p) => p.queueUrls,
  );

export const listQueueUrls = (prefix?: string) =>
  allPages<{ QueueUrls?: string[]; NextToken?: string }>('ListQueues', { QueueNamePrefix: prefix }, (p) => p.QueueUrls);

export async function peek(url: string, max: number, token?: string, filter?: object) {
  return call<{ Messages?: PeekedMessage[]; NextToken?: string }>('PeekMessages', {
    QueueUrl: url,
    MaxResults: max,
    NextToken: token,
    Filter: filter,
  });
}
