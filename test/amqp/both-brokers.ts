/**
 * Runs one amqplib (or pika) check against RabbitMQ and against Redrive and compares what
 * the client saw: the tests of RabbitMQ's behaviour use it. Names are prefixed per run,
 * since RabbitMQ is shared.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { RABBIT_URL, rabbitOrSkip } from './support.js';

/** What `check` observed on RabbitMQ must equal what it observes on Redrive; returns Redrive's. */
export async function sameOnBoth<T>(
  t: TestContext,
  redriveUrl: string,
  check: (url: string, prefix: string) => Promise<T>,
): Promise<T | undefined> {
  const rabbit = await rabbitOrSkip(t);
  if (!rabbit) return undefined;
  await rabbit.close();
  const prefix = `redrive-${randomBytes(3).toString('hex')}-`;
  const want = await check(RABBIT_URL, prefix);
  const got = await check(redriveUrl, prefix);
  t.diagnostic(`RabbitMQ: ${JSON.stringify(want)}`);
  assert.deepEqual(got, want);
  return got;
}

/** The reply code an operation failed with, or 'ok'. */
export async function replyCode(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code?: number }).code ?? String(e);
  }
}
