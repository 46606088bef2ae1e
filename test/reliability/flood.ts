/**
 * The flooding client of the overload proof, run as a separate process so that it loads
 * the server and not the proof's own event loop. Started by overload.test.ts with
 * REDRIVE_FLOOD_URL set; does nothing when imported otherwise.
 * Sends 10-message batches from `REDRIVE_FLOOD_CONCURRENCY` loops as fast as the server
 * answers, until it receives 'stop' over IPC, then reports its counts and exits.
 */
import { queueUrl, sqs } from './support.js';

export interface FloodReport {
  requests: number;
  ok: number;
  acknowledged: number;
  /** Clean SQS errors by `<status> <type>`. */
  errors: Record<string, number>;
  networkErrors: number;
}

const url = process.env.REDRIVE_FLOOD_URL;
if (url && process.send) {
  const concurrency = Number(process.env.REDRIVE_FLOOD_CONCURRENCY ?? 48);
  const body = 'f'.repeat(512);
  const report: FloodReport = { requests: 0, ok: 0, acknowledged: 0, errors: {}, networkErrors: 0 };
  let stop = false;
  process.on('message', (m) => {
    if (m === 'stop') stop = true;
  });
  const loop = async () => {
    while (!stop) {
      report.requests++;
      const a = await sqs<{ Successful?: unknown[] }>(
        url,
        'SendMessageBatch',
        {
          QueueUrl: queueUrl(url, 'ov-flood'),
          Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: body })),
        },
        60_000,
      );
      if (a.status === 200) {
        report.ok++;
        report.acknowledged += a.body?.Successful?.length ?? 0;
      } else if (a.status === 0) {
        report.networkErrors++;
        await new Promise((r) => setTimeout(r, 10));
      } else {
        const key = `${a.status} ${a.errorType}`;
        report.errors[key] = (report.errors[key] ?? 0) + 1;
        // A shed request: back off a little, as an SDK would.
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  process.send(report, () => process.exit(0));
}
