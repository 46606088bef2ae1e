/** Shared assertions for the end-to-end tests: SQS errors as the AWS SDK reports them. */
import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';

export interface ExpectedError {
  /** `err.name`: the modeled exception, or the query code for unmodeled errors. */
  name: string;
  /** `err.Code`, from the x-amzn-query-error header; defaults to `name`. */
  code?: string;
  status: number;
  message?: string | RegExp;
}

interface SdkError extends Error {
  Code?: string;
  Type?: string;
  $metadata?: { httpStatusCode?: number };
}

/** Awaits `p`, which must fail with exactly this SQS error. */
export async function assertSqsError(p: Promise<unknown>, expected: ExpectedError): Promise<SdkError> {
  let caught: SdkError | undefined;
  try {
    await p;
  } catch (e) {
    caught = e as SdkError;
  }
  assert.ok(caught, `expected ${expected.name} but the call succeeded`);
  assert.equal(caught.name, expected.name, `name (message: ${caught.message})`);
  assert.equal(caught.Code, expected.code ?? expected.name, 'Code');
  assert.equal(caught.Type, 'Sender', 'Type');
  assert.equal(caught.$metadata?.httpStatusCode, expected.status, 'HTTP status');
  if (expected.message instanceof RegExp) assert.match(caught.message, expected.message);
  else if (expected.message !== undefined) assert.equal(caught.message, expected.message);
  return caught;
}

export const invalidParameterValue = (message?: string | RegExp): ExpectedError => ({
  name: 'InvalidParameterValue',
  status: 400,
  message,
});

export const queueDoesNotExist: ExpectedError = {
  name: 'QueueDoesNotExist',
  code: 'AWS.SimpleQueueService.NonExistentQueue',
  status: 400,
  message: 'The specified queue does not exist.',
};

export async function createQueue(sqs: SQSClient, name: string, attributes?: Record<string, string>): Promise<string> {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return out.QueueUrl!;
}

export async function attributes(
  sqs: SQSClient,
  QueueUrl: string,
  names: string[] = ['All'],
): Promise<Record<string, string>> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: names as QueueAttributeName[] }),
  );
  return out.Attributes ?? {};
}

/** The queue's approximate counts as numbers. */
export async function counts(
  sqs: SQSClient,
  QueueUrl: string,
): Promise<{ visible: number; inflight: number; delayed: number }> {
  const a = await attributes(sqs, QueueUrl, [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ]);
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    inflight: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

/** A short-poll receive; returns the messages (possibly none). */
export async function receive(
  sqs: SQSClient,
  QueueUrl: string,
  extra: Partial<ConstructorParameters<typeof ReceiveMessageCommand>[0]> = {},
): Promise<Message[]> {
  const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0, ...extra }));
  return out.Messages ?? [];
}

/**
 * A header every AWS SDK sends and no web page can add to a cross-site request: without
 * --credentials, an unsigned form POST needs one to get past the open-mode guard
 * (src/server/request-guard.ts), so the raw Query tests send it as the SDKs do.
 */
export const SDK_HEADER = { 'amz-sdk-invocation-id': '7a1f3b0e-0000-4000-8000-000000000000' } as const;

/** A raw AWS JSON 1.0 request, bypassing the SDK. */
export async function rawJson(url: string, target: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target, ...headers },
    body,
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // left empty: the caller asserts on it
  }
  return { status: res.status, headers: res.headers, text, json };
}
