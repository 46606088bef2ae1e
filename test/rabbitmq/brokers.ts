/**
 * The two brokers of the differential check behind one small interface, so each scenario
 * is written once: RabbitMQ through amqplib (queues dead-letter through the default
 * exchange to a named queue), and Redrive through the AWS SDK plus its extensions.
 */
import { randomBytes } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ServerProcess } from '../support/server-process.js';

export interface QueueOptions {
  deadLetterTo?: string;
  ttlMs?: number;
  maxLength?: number;
  /** A quorum queue's x-delivery-limit; Redrive's maxReceiveCount. */
  deliveryLimit?: number;
}

/** One history entry as both brokers can report it. */
export interface Entry {
  queue: string;
  reason: string;
  count: number;
}
export interface Got {
  body: string;
  history: Entry[];
  handle: unknown;
  queue: string;
}

export interface Broker {
  readonly name: string;
  declare(queue: string, opts?: QueueOptions): Promise<void>;
  publish(queue: string, body: string): Promise<void>;
  /** The next message of the queue, waiting up to `waitMs` (real time) for one. */
  get(queue: string, waitMs?: number): Promise<Got | undefined>;
  /** Dead-letters it (basic.reject without requeue; RejectMessage). */
  reject(got: Got): Promise<void>;
  /** Gives it back for redelivery (basic.nack with requeue; visibility 0). */
  release(got: Got): Promise<void>;
  /** Lets `ms` pass (real time; Redrive's manual clock). */
  pass(ms: number): Promise<void>;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll<T>(waitMs: number, attempt: () => Promise<T | undefined>): Promise<T | undefined> {
  const until = Date.now() + waitMs;
  for (;;) {
    const v = await attempt();
    if (v !== undefined || Date.now() >= until) return v;
    await pause(20);
  }
}

export class RabbitBroker implements Broker {
  readonly name: string;
  private readonly prefix = `redrive-diff-${randomBytes(4).toString('hex')}-`;
  private readonly declared: string[] = [];

  private constructor(
    private readonly conn: ChannelModel,
    private readonly ch: Channel,
  ) {
    this.name = `RabbitMQ ${String(conn.connection.serverProperties?.version ?? '?')}`;
  }

  static async connect(url: string, timeoutMs = 3000): Promise<RabbitBroker> {
    const conn = await Promise.race([
      amqp.connect(url),
      pause(timeoutMs).then(() => Promise.reject(new Error(`no answer within ${timeoutMs} ms`))),
    ]);
    return new RabbitBroker(conn, await conn.createChannel());
  }

  async declare(queue: string, o: QueueOptions = {}): Promise<void> {
    const args: Record<string, unknown> = {};
    if (o.deadLetterTo)
      Object.assign(args, { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': this.prefix + o.deadLetterTo });
    if (o.ttlMs !== undefined) args['x-message-ttl'] = o.ttlMs;
    if (o.maxLength !== undefined) args['x-max-length'] = o.maxLength;
    if (o.deliveryLimit !== undefined)
      Object.assign(args, { 'x-queue-type': 'quorum', 'x-delivery-limit': o.deliveryLimit });
    await this.ch.assertQueue(this.prefix + queue, { durable: o.deliveryLimit !== undefined, arguments: args });
    this.declared.push(this.prefix + queue);
  }

  async publish(queue: string, body: string): Promise<void> {
    this.ch.sendToQueue(this.prefix + queue, Buffer.from(body));
    await pause(50);
  }

  async get(queue: string, waitMs = 5000): Promise<Got | undefined> {
    const msg = await poll(waitMs, async () => (await this.ch.get(this.prefix + queue, { noAck: false })) || undefined);
    if (!msg) return undefined;
    return { body: msg.content.toString(), history: this.history(msg), handle: msg, queue };
  }

  private history(msg: GetMessage): Entry[] {
    const deaths = (msg.properties.headers?.['x-death'] ?? []) as { queue: string; reason: string; count: number }[];
    return deaths.map((d) => ({ queue: d.queue.slice(this.prefix.length), reason: d.reason, count: Number(d.count) }));
  }

  async reject(got: Got): Promise<void> {
    this.ch.reject(got.handle as GetMessage, false);
    await pause(50);
  }

  async release(got: Got): Promise<void> {
    this.ch.nack(got.handle as GetMessage, false, true);
    await pause(50);
  }

  async pass(ms: number): Promise<void> {
    await pause(ms);
  }

  async close(): Promise<void> {
    for (const q of this.declared) await this.ch.deleteQueue(q).catch(() => undefined);
    await this.conn.close();
  }
}

export class RedriveBroker implements Broker {
  readonly name = 'Redrive';
  private readonly sqs: SQSClient;

  constructor(private readonly server: ServerProcess) {
    this.sqs = server.client();
  }

  private url(queue: string): string {
    return `${this.server.url}/000000000000/${queue}`;
  }

  /** Creates the queue (and its dead-letter queue, if not declared yet), then sets its attributes. */
  async declare(queue: string, o: QueueOptions = {}): Promise<void> {
    const a: Record<string, string> = {};
    if (o.deadLetterTo) {
      await this.sqs.send(new CreateQueueCommand({ QueueName: o.deadLetterTo }));
      const target = `arn:aws:sqs:us-east-1:000000000000:${o.deadLetterTo}`;
      a.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: target, maxReceiveCount: o.deliveryLimit ?? 1000 });
    }
    if (o.ttlMs !== undefined) a.RedriveMessageTtlSeconds = String(Math.ceil(o.ttlMs / 1000));
    if (o.maxLength !== undefined) a.RedriveMaxLength = String(o.maxLength);
    await this.sqs.send(new CreateQueueCommand({ QueueName: queue }));
    if (Object.keys(a).length)
      await this.sqs.send(new SetQueueAttributesCommand({ QueueUrl: this.url(queue), Attributes: a }));
  }

  async publish(queue: string, body: string): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.url(queue), MessageBody: body }));
  }

  async get(queue: string, waitMs = 3000): Promise<Got | undefined> {
    return poll(waitMs, async () => {
      const out = await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.url(queue),
          VisibilityTimeout: 30,
          MessageSystemAttributeNames: ['RedriveDeathHistory' as never],
        }),
      );
      const m = out.Messages?.[0];
      if (!m) return undefined;
      const deaths = JSON.parse(m.Attributes?.['RedriveDeathHistory' as never] ?? '[]') as Entry[];
      return {
        body: m.Body!,
        history: deaths.map((d) => ({ queue: d.queue, reason: d.reason, count: d.count })),
        handle: m.ReceiptHandle,
        queue,
      };
    });
  }

  async reject(got: Got): Promise<void> {
    const res = await fetch(this.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.RejectMessage' },
      body: JSON.stringify({ QueueUrl: this.url(got.queue), ReceiptHandle: got.handle }),
    });
    if (res.status !== 200) throw new Error(`RejectMessage: ${res.status} ${await res.text()}`);
  }

  async release(got: Got): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.url(got.queue),
        ReceiptHandle: got.handle as string,
        VisibilityTimeout: 0,
      }),
    );
  }

  async pass(ms: number): Promise<void> {
    // The expiry sweep runs every second of the server's clock; each one is let finish.
    for (let t = 0; t < ms + 1000; t += 1000) {
      await this.server.advanceClock(1000);
      await pause(50);
    }
  }

  async close(): Promise<void> {
    await this.server.stop();
    this.server.cleanup();
  }
}
