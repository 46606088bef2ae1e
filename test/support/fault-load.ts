import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  type SQSServiceException,
} from '@aws-sdk/client-sqs';
import type { ServerProcess } from './server-process.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Acknowledged sends a load needs before its report can show anything (assertReport). */
export const ENOUGH_ACKNOWLEDGED = 101;

export interface LoadReport {
  sent: number;
  acknowledged: number;
  /** Distinct messages received at least once. */
  received: number;
  /** Acknowledged sends never received. */
  lost: number;
  /** Messages received more than once (allowed: a delete that failed lets it come back). */
  duplicated: number;
  /** Messages received again after their delete was acknowledged (never allowed). */
  deletedReturned: number;
  /** Failed requests by `<HTTP status> <error name>`. */
  errors: Record<string, number>;
}

/**
 * Traffic through every node while a test breaks the database: one producer sending
 * single messages with unique bodies and two consumers receiving and deleting per node,
 * each pausing briefly after an error. It records what was acknowledged and what came
 * back, so a test can show that no acknowledged message was lost and no deleted one
 * returned. The queue's visibility timeout must be short, so that messages whose delete
 * failed come back during the drain.
 */
export class FaultLoad {
  private producing = true;
  private draining = false;
  private n = 0;
  private readonly acked = new Set<string>();
  private readonly received = new Map<string, number>();
  /** Each deleted message's body, and when its delete was acknowledged. */
  private readonly deleted = new Map<string, number>();
  private deletedReturned = 0;
  private readonly errors: Record<string, number> = {};
  private readonly running: Promise<void>[] = [];
  private aborted = false;
  /** Every load not yet finished, so a failed test's after() can end them (stopAll). */
  private static readonly live = new Set<FaultLoad>();

  /** Ends every unfinished load at once: a test that failed midway must not leave its loops running. */
  static stopAll(): void {
    for (const load of FaultLoad.live) {
      load.aborted = true;
      load.producing = false;
    }
  }

  constructor(
    private readonly nodes: ServerProcess[],
    private readonly queue: string,
    private readonly account = '000000000000',
  ) {
    FaultLoad.live.add(this);
    const clients = nodes.map((n) => n.client());
    nodes.forEach((_, i) => {
      this.running.push(this.produce(clients[i]!, this.urlOn(i)));
      this.running.push(this.consume(clients[i]!, this.urlOn(i)), this.consume(clients[i]!, this.urlOn(i)));
    });
  }

  urlOn(i: number): string {
    return `${this.nodes[i]!.url}/${this.account}/${this.queue}`;
  }

  /**
   * Stops sending, receives until the queue stays empty for `quietMs`, and reports. How
   * much a load sends in a given time depends on the machine: on a loaded one it sends on
   * (for up to `withinMs` more) until ENOUGH_ACKNOWLEDGED sends were acknowledged, so the
   * report judges outcomes, not speed.
   */
  async finish(quietMs: number, withinMs = 90_000): Promise<LoadReport> {
    for (
      const until = Date.now() + withinMs;
      this.acked.size < ENOUGH_ACKNOWLEDGED && !this.aborted && Date.now() < until;
    )
      await pause(50);
    this.producing = false;
    this.draining = true;
    this.quietMs = quietMs;
    await Promise.all(this.running);
    FaultLoad.live.delete(this);
    const lost = [...this.acked].filter((b) => !this.received.has(b)).length;
    return {
      sent: this.n,
      acknowledged: this.acked.size,
      received: this.received.size,
      lost,
      duplicated: [...this.received.values()].filter((c) => c > 1).length,
      deletedReturned: this.deletedReturned,
      errors: { ...this.errors },
    };
  }

  private quietMs = 0;

  private failed(e: unknown): void {
    const err = e as SQSServiceException;
    const key = `${err.$metadata?.httpStatusCode ?? 'no-status'} ${err.name}`;
    this.errors[key] = (this.errors[key] ?? 0) + 1;
  }

  private async produce(sqs: SQSClient, url: string): Promise<void> {
    while (this.producing) {
      const body = `m${this.n++}`;
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
        this.acked.add(body);
      } catch (e) {
        this.failed(e);
        await pause(100);
      }
    }
  }

  private async consume(sqs: SQSClient, url: string): Promise<void> {
    let quietSince = Infinity;
    for (;;) {
      if (this.aborted || (this.draining && Date.now() - quietSince >= this.quietMs)) return;
      try {
        // A message counts as returned after its delete only if this receive was asked for
        // after the delete was acknowledged: on a loaded machine an answer can arrive after
        // a delete's although the server gave it out before.
        const asked = Date.now();
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) {
          if (quietSince === Infinity) quietSince = Date.now();
          continue;
        }
        quietSince = Infinity;
        for (const m of msgs) {
          const deletedAt = this.deleted.get(m.Body!);
          if (deletedAt !== undefined && deletedAt < asked) this.deletedReturned++;
          this.received.set(m.Body!, (this.received.get(m.Body!) ?? 0) + 1);
        }
        const del = await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: msgs.map((m, j) => ({ Id: `d${j}`, ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
        const acknowledged = Date.now();
        for (const ok of del.Successful ?? []) this.deleted.set(msgs[Number(ok.Id!.slice(1))]!.Body!, acknowledged);
      } catch (e) {
        quietSince = Infinity;
        this.failed(e);
        await pause(100);
      }
    }
  }
}
