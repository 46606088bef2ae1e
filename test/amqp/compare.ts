/**
 * The differential comparison: each scenario runs through amqplib against the real
 * RabbitMQ (127.0.0.1:5672, guest/guest, or REDRIVE_TEST_AMQP_URL) and against a Redrive
 * server, and what the client observes must be the same.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import { Ctx, type PolicyControl, type Scenario } from './scenarios.js';
import { rabbitPolicies, redrivePolicies } from './policy-control.js';
import { RABBIT_URL, rabbitOrSkip, startAmqpServer, type AmqpServer } from './support.js';

export function compareWithRabbit(title: string, list: Scenario[]): void {
  describe(title, () => {
    let redrive: AmqpServer;
    let redriveConn: ChannelModel;

    before(async () => {
      redrive = await startAmqpServer();
      redriveConn = await amqp.connect(redrive.url);
      redriveConn.on('error', () => undefined);
    });

    after(async () => {
      await redriveConn?.close().catch(() => undefined);
      await redrive?.server.stop();
      redrive?.server.cleanup();
    });

    for (const s of list) {
      test(s.name, async (t) => {
        const rabbit = await rabbitOrSkip(t);
        if (!rabbit) return;
        const prefix = `redrive-amqp-${randomBytes(3).toString('hex')}-`;
        rabbit.on('error', () => undefined);
        const runOn = async (conn: ChannelModel, url: string, policies: PolicyControl) => {
          const c = new Ctx(conn, prefix, url, policies);
          try {
            return await s.run(c);
          } finally {
            await c.cleanup();
          }
        };
        try {
          const want = await runOn(rabbit, RABBIT_URL, rabbitPolicies);
          const got = await runOn(redriveConn, redrive.url, redrivePolicies(redrive.server.url));
          t.diagnostic(`RabbitMQ: ${JSON.stringify(want)}`);
          assert.deepEqual(got, want);
        } finally {
          await rabbit.close().catch(() => undefined);
        }
      });
    }
  });
}
