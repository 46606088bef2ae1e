/** Helpers for the dead-letter and move-task end-to-end tests. */
import {
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  SendMessageBatchCommand,
  type ListMessageMoveTasksResultEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ServerProcess } from '../support/server-process.js';
import { receive } from './helpers.js';

export const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;

export const redrivePolicy = (dlqName: string, maxReceiveCount = 1) =>
  JSON.stringify({ deadLetterTargetArn: arn(dlqName), maxReceiveCount });

/** Creates `dlqName` (if needed) and a source queue dead-lettering into it after one receive. */
export async function sourceOf(sqs: SQSClient, name: string, dlqName: string): Promise<string> {
  await sqs.send(new CreateQueueCommand({ QueueName: dlqName }));
  const out = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { RedrivePolicy: redrivePolicy(dlqName) } }),
  );
  return out.QueueUrl!;
}

/** Sends `bodies` to a source with maxReceiveCount 1 and receives until they all sit in its DLQ. */
export async function deadLetter(sqs: SQSClient, src: string, bodies: string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: src,
        Entries: bodies.slice(i, i + 10).map((b, j) => ({ Id: `m${j}`, MessageBody: b })),
      }),
    );
  }
  for (;;) {
    const got = await receive(sqs, src, { VisibilityTimeout: 0, MaxNumberOfMessages: 10 });
    if (got.length === 0) return;
  }
}

/** Receives everything visible in the queue (deleting nothing), oldest first. */
export async function drain(sqs: SQSClient, url: string) {
  const all = [];
  for (;;) {
    const got = await receive(sqs, url, {
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 600,
      MessageSystemAttributeNames: ['All'],
    });
    if (got.length === 0) return all;
    all.push(...got);
  }
}

export async function latestTask(
  sqs: SQSClient,
  sourceArn: string,
): Promise<ListMessageMoveTasksResultEntry | undefined> {
  const out = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn }));
  return out.Results?.[0];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls (in real time, briefly) until `check` returns a value that satisfies `done`. */
export async function waitFor<T>(
  check: () => Promise<T>,
  done: (v: T) => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await pause(10);
  }
}

/** Waits until the source's latest task is no longer RUNNING, moving the server clock a second at a time. */
export async function runToEnd(server: ServerProcess, sqs: SQSClient, sourceArn: string, maxSteps = 200) {
  for (let i = 0; i < maxSteps; i++) {
    const t = await latestTask(sqs, sourceArn);
    if (t && t.Status !== 'RUNNING') return t;
    await server.advanceClock(1_000);
    await pause(5);
  }
  throw new Error('the task did not finish');
}
