import type { SignatureV4 } from '@smithy/signature-v4';
import { CliError, isMissingQueue, SqsCallError } from './cli-error.js';
import { findCredentials, findRegion, signer, type ConnectionOptions } from './credentials.js';

export { SqsCallError } from './cli-error.js';

/**
 * A minimal SQS JSON-protocol client for the CLI. Plain fetch rather than the AWS SDK:
 * the SDK sends only modelled fields, and the CLI also uses Redrive's extensions
 * (PeekMessages, ListQueueSummaries, selective-redrive filters). Requests are signed with
 * SigV4 when the standard chain finds credentials, and go unsigned otherwise.
 */
export class SqsJsonClient {
  private signing?: Promise<SignatureV4 | undefined>;

  constructor(
    readonly endpoint: string,
    private readonly connection: ConnectionOptions = {},
  ) {}

  /** The signer, once per command: finding credentials may read files. */
  private sign(): Promise<SignatureV4 | undefined> {
    this.signing ??= findCredentials(this.connection).then(
      async (id) => id && signer(id, (await findRegion(this.connection)) ?? 'us-east-1'),
    );
    return this.signing;
  }

  /** The region requests are signed for; undefined when they go unsigned (the server's --region is theirs). */
  async signedRegion(): Promise<string | undefined> {
    return (await this.sign()) ? ((await findRegion(this.connection)) ?? 'us-east-1') : undefined;
  }

  async call<T = Record<string, unknown>>(action: string, input: Record<string, unknown> = {}): Promise<T> {
    let url: URL;
    try {
      url = new URL('/', this.endpoint);
    } catch {
      throw new CliError(
        `--endpoint ${JSON.stringify(this.endpoint)} is not a URL: give one such as http://127.0.0.1:9324`,
        { code: 'InvalidEndpoint' },
      );
    }
    const body = JSON.stringify(input);
    let headers: Record<string, string> = {
      host: url.host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
    };
    const s = await this.sign();
    if (s) {
      const signed = await s.sign({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query: {},
        headers,
        body,
      });
      headers = signed.headers;
    }
    delete headers.host; // fetch sets it, to the same value
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers, body });
    } catch (e) {
      const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach ${this.endpoint} (${cause?.code ?? cause?.message ?? (e as Error).message}): is \`redrive serve\` running there? ` +
          'Point --endpoint (or REDRIVE_ENDPOINT) at the server',
        { code: 'ConnectionFailed', action },
      );
    }
    const text = await res.text();
    const parsed = this.parse(text, res, action);
    if (!res.ok) {
      const code =
        res.headers.get('x-amzn-query-error')?.split(';')[0] ?? String(parsed.__type ?? res.status).replace(/^.*#/, '');
      throw explain(
        new SqsCallError(action, code, String(parsed.message ?? parsed.Message ?? text), res.status),
        this.endpoint,
      );
    }
    return parsed as T;
  }

  /** The body as JSON; anything else means the endpoint is not an SQS server. */
  private parse(text: string, res: Response, action: string): Record<string, unknown> {
    const type = res.headers.get('content-type') ?? '';
    try {
      if (/json/.test(type) || text.trim() === '' || /^\s*\{/.test(text)) {
        const v = text.trim() ? (JSON.parse(text) as unknown) : {};
        if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      }
    } catch {
      // reported below
    }
    throw new CliError(
      `${this.endpoint} is not an SQS server: it answered HTTP ${res.status}${type ? ` (${type.split(';')[0]})` : ''} where SQS answers JSON. ` +
        'Check --endpoint (or REDRIVE_ENDPOINT): Redrive listens on http://127.0.0.1:9324 by default',
      { code: 'NotSqsEndpoint', action, detail: text.slice(0, 200) },
    );
  }

  /**
   * A queue URL from a URL or a queue name. `role` names the argument or flag, so that a
   * missing queue is reported as `--to "nope"`, not as the API's NonExistentQueue.
   */
  async queueUrl(queue: string, role = 'queue'): Promise<string> {
    if (/^https?:\/\//.test(queue)) return queue;
    try {
      return (await this.call<{ QueueUrl: string }>('GetQueueUrl', { QueueName: queue })).QueueUrl;
    } catch (e) {
      if (isMissingQueue(e)) throw noSuchQueue(e, queue, role);
      throw e;
    }
  }

  async attributes(queueUrl: string, names: string[], role = 'queue'): Promise<Record<string, string>> {
    try {
      return (
        (
          await this.call<{ Attributes?: Record<string, string> }>('GetQueueAttributes', {
            QueueUrl: queueUrl,
            AttributeNames: names,
          })
        ).Attributes ?? {}
      );
    } catch (e) {
      if (isMissingQueue(e)) throw noSuchQueue(e, queueName(queueUrl), role);
      throw e;
    }
  }

  async queueArn(queue: string, role = 'queue'): Promise<string> {
    return (await this.attributes(await this.queueUrl(queue, role), ['QueueArn'], role)).QueueArn!;
  }
}

function noSuchQueue(e: SqsCallError, queue: string, role: string): CliError {
  return new CliError(
    `${role} "${queue}" does not exist in this account: check the name with \`redrive queues list\``,
    { code: e.code, action: e.action, detail: e.apiMessage },
  );
}

/** The API's authentication errors, said as what to do. */
function explain(e: SqsCallError, endpoint: string): CliError {
  const say = (message: string) => new CliError(message, { code: e.code, action: e.action, detail: e.apiMessage });
  switch (e.code) {
    case 'MissingAuthenticationToken':
      return say(
        `${endpoint} requires signed requests and no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use --profile`,
      );
    case 'InvalidClientTokenId':
      return say(`${endpoint} does not know this access key: check AWS_ACCESS_KEY_ID or the profile (--profile)`);
    case 'SignatureDoesNotMatch':
      return say(`${endpoint} refused the signature: the secret access key does not match the access key id`);
    case 'RequestExpired':
      return say(`${endpoint} refused the request as expired: check this machine's clock`);
    default:
      return e;
  }
}

const queueName = (urlOrArn: string) => urlOrArn.split(/[/:]/).pop()!;
