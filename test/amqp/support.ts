/**
 * Helpers of the AMQP tests: a Redrive server process with its AMQP listener on a random
 * port, and the real RabbitMQ the differential tests compare against.
 */
import assert from 'node:assert/strict';
import { after, before, type TestContext } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess, type ServerProcessOptions } from '../support/server-process.js';
import { skipReason } from '../support/requirements.js';

export const RABBIT_URL = process.env.REDRIVE_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export interface AmqpServer {
  server: ServerProcess;
  url: string;
  port: number;
}

/** `redrive serve --amqp-port 0` on SQLite (or PostgreSQL with REDRIVE_TEST_STORAGE=postgres); the port is read from the start-up log. */
export async function startAmqpServer(opts: ServerProcessOptions = {}): Promise<AmqpServer> {
  const server = await startServerProcess({ ...opts, args: ['--amqp-port', '0', ...(opts.args ?? [])] });
  const m = /"amqpPort":(\d+)/.exec(server.output());
  assert.ok(m, `no AMQP port in the server's log:\n${server.output()}`);
  const port = Number(m[1]);
  return { server, port, url: `amqp://guest:guest@127.0.0.1:${port}` };
}

/** A server for the enclosing describe(), started before its tests and stopped after them. */
export function useAmqpServer(): () => AmqpServer {
  let redrive: AmqpServer | undefined;
  before(async () => {
    redrive = await startAmqpServer();
  });
  after(async () => {
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });
  return () => redrive!;
}

/** A server for the describe() with an amqplib connection and an SQS client to it (mixed-protocol tests). */
export function useMixedServer(): () => {
  redrive: AmqpServer;
  conn: ChannelModel;
  sqs: SQSClient;
  url(queue: string): string;
} {
  let redrive: AmqpServer | undefined;
  let conn: ChannelModel | undefined;
  let sqs: SQSClient | undefined;
  before(async () => {
    redrive = await startAmqpServer();
    conn = await amqp.connect(redrive.url);
    sqs = redrive.server.client();
  });
  after(async () => {
    await conn?.close().catch(() => undefined);
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });
  return () => ({ redrive: redrive!, conn: conn!, sqs: sqs!, url: (q) => `${redrive!.server.url}/000000000000/${q}` });
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RabbitMQ, or undefined after skipping the test (failing it under CI=true, where it must be there). */
export async function rabbitOrSkip(t: TestContext): Promise<ChannelModel | undefined> {
  try {
    return await Promise.race([
      amqp.connect(RABBIT_URL),
      pause(3000).then(() => Promise.reject(new Error('no answer within 3 s'))),
    ]);
  } catch (e) {
    const why = `RabbitMQ is not reachable at ${RABBIT_URL.replace(/\/\/[^@]*@/, '//')} (${(e as Error).message})`;
    if (process.env.CI === 'true') assert.fail(`RabbitMQ is needed when CI=true: ${why}`);
    t.skip(skipReason('rabbitmq', why));
    return undefined;
  }
}
