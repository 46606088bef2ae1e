/**
 * A minimal SQS JSON-protocol client for the CLI. Plain fetch rather than the AWS SDK:
 * the SDK sends only modelled fields, and the CLI also uses Redrive's extensions
 * (PeekMessages, selective-redrive filters).
 */
export class SqsCallError extends Error {
  constructor(readonly action: string, readonly code: string, message: string) {
    super(`${action}: ${code}: ${message}`);
  }
}

export class SqsJsonClient {
  constructor(readonly endpoint: string) {}

  async call<T = Record<string, unknown>>(action: string, input: Record<string, unknown> = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL('/', this.endpoint), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body: JSON.stringify(input),
      });
    } catch (e) {
      throw new SqsCallError(action, 'ConnectionFailed', `cannot reach ${this.endpoint} (${(e as Error).cause ?? (e as Error).message})`);
    }
    const text = await res.text();
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (!res.ok) {
      const code = res.headers.get('x-amzn-query-error')?.split(';')[0] ?? String(body.__type ?? res.status);
      throw new SqsCallError(action, code, String(body.message ?? text));
    }
    return body as T;
  }

  /** A queue URL from a URL or a queue name. */
  async queueUrl(queue: string): Promise<string> {
    if (/^https?:\/\//.test(queue)) return queue;
    return (await this.call<{ QueueUrl: string }>('GetQueueUrl', { QueueName: queue })).QueueUrl;
  }

  async attributes(queueUrl: string, names: string[]): Promise<Record<string, string>> {
    return (await this.call<{ Attributes?: Record<string, string> }>('GetQueueAttributes', { QueueUrl: queueUrl, AttributeNames: names })).Attributes ?? {};
  }

  async queueArn(queue: string): Promise<string> {
    return (await this.attributes(await this.queueUrl(queue), ['QueueArn'])).QueueArn!;
  }

  /** Every queue URL of the account, across ListQueues pages. */
  async allQueueUrls(): Promise<string[]> {
    const urls: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.call<{ QueueUrls?: string[]; NextToken?: string }>('ListQueues', { MaxResults: 1000, ...(token ? { NextToken: token } : {}) });
      urls.push(...(page.QueueUrls ?? []));
      token = page.NextToken;
    } while (token);
    return urls;
  }
}

export const queueName = (urlOrArn: string) => urlOrArn.split(/[/:]/).pop()!;
