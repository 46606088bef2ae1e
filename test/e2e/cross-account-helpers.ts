/**
 * Two accounts on one server under --credentials (docs/security.md): a server
 * process, an SDK client per account, and a signed raw JSON call for the extensions the
 * SDK cannot send, signed with the same SigV4 signer the CLI uses.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { signer } from '../../src/cli/credentials.js';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

export const A = { accessKeyId: 'AKIDACCOUNTA', secretAccessKey: 'secret-a', accountId: '111111111111' };
export const B = { accessKeyId: 'AKIDACCOUNTB', secretAccessKey: 'secret-b', accountId: '222222222222' };
export type Account = typeof A;
export const REGION = 'us-east-1';

export const arnOf = (who: Account, name: string) => `arn:aws:sqs:${REGION}:${who.accountId}:${name}`;

export interface Answer {
  status: number;
  code?: string;
  message?: string;
  json: Record<string, any>;
}

export interface TwoAccounts {
  server: ServerProcess;
  sdk(who: Account): SQSClient;
  /** A signed AWS JSON 1.0 call; errors are answers, not exceptions. */
  call(who: Account, action: string, input: Record<string, unknown>): Promise<Answer>;
  /** As call, but the action must succeed. */
  ok(who: Account, action: string, input: Record<string, unknown>): Promise<Record<string, any>>;
  urlOf(who: Account, name: string): string;
  /** Polls ListMessageMoveTasks until the newest task of `sourceArn` is no longer RUNNING. */
  finished(who: Account, sourceArn: string): Promise<Record<string, any>>;
}

/** Starts the server before the file's tests and stops it after; `ready` receives the handle. */
export function useTwoAccounts(ready: (t: TwoAccounts) => void): void {
  const clients: SQSClient[] = [];
  const credentials = Object.fromEntries(
    [A, B].map((k) => [k.accessKeyId, { secretAccessKey: k.secretAccessKey, accountId: k.accountId }]),
  );
  // SQLite, so that REDRIVE_TEST_STORAGE=postgres runs the suite on PostgreSQL too.
  useServerProcess(
    { credentials, args: ['--region', REGION] },
    (s) => {
      const call = async (who: Account, action: string, input: Record<string, unknown>): Promise<Answer> => {
        const url = new URL('/', s.url);
        const body = JSON.stringify(input);
        const signed = await signer(
          { accessKeyId: who.accessKeyId, secretAccessKey: who.secretAccessKey },
          REGION,
        ).sign({
          method: 'POST',
          protocol: url.protocol,
          hostname: url.hostname,
          port: Number(url.port),
          path: '/',
          query: {},
          headers: {
            host: url.host,
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': `AmazonSQS.${action}`,
          },
          body,
        });
        const headers = { ...signed.headers } as Record<string, string>;
        delete headers.host;
        const res = await fetch(url, { method: 'POST', headers, body });
        const text = await res.text();
        const json = text ? (JSON.parse(text) as Record<string, any>) : {};
        return res.ok
          ? { status: res.status, json }
          : {
              status: res.status,
              json,
              code: res.headers.get('x-amzn-query-error')?.split(';')[0],
              message: json.message,
            };
      };
      const ok = async (who: Account, action: string, input: Record<string, unknown>) => {
        const r = await call(who, action, input);
        if (r.status !== 200) throw new Error(`${action} failed: ${r.code} ${r.message}`);
        return r.json;
      };
      ready({
        server: s,
        sdk: (who) => {
          const c = new SQSClient({
            endpoint: s.url,
            region: REGION,
            credentials: { accessKeyId: who.accessKeyId, secretAccessKey: who.secretAccessKey },
            maxAttempts: 1,
          });
          clients.push(c);
          return c;
        },
        call,
        ok,
        urlOf: (who, name) => `${s.url}/${who.accountId}/${name}`,
        finished: async (who, sourceArn) => {
          for (let i = 0; i < 200; i++) {
            const { Results } = await ok(who, 'ListMessageMoveTasks', { SourceArn: sourceArn });
            if (Results?.[0] && Results[0].Status !== 'RUNNING') return Results[0];
            await new Promise((r) => setTimeout(r, 50));
          }
          throw new Error(`the task of ${sourceArn} did not end`);
        },
      });
    },
    () => clients.forEach((c) => c.destroy()),
  );
}
