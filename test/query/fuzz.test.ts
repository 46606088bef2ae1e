import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { SDK_HEADER } from '../e2e/helpers.js';

/**
 * Malformed requests on both protocols against a running server. Every answer must be a
 * well-formed SQS answer (never a 5xx), the server must stay up, and the control queue,
 * which the fuzzer only reaches with reads and forged receipt handles, must not change.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const xml = new XMLParser();

interface Raw {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(base: URL, r: Raw): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: r.method,
        path: r.path,
        headers: { ...SDK_HEADER, ...r.headers, 'content-length': r.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

// Only reads and receipt-handle actions may name the control queue; a forged handle never matches.
const ON_CONTROL = [
  'GetQueueAttributes',
  'ListQueueTags',
  'GetQueueUrl',
  'ListQueues',
  'DeleteMessage',
  'DeleteMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
  'PeekMessages',
  'ListDeadLetterSourceQueues',
  'ListMessageMoveTasks',
];
// Writes go to a sandbox queue, which may change; deleting it or long-polling it would only slow the run.
const ON_SANDBOX = [
  'SendMessage',
  'SendMessageBatch',
  'PurgeQueue',
  'SetQueueAttributes',
  'TagQueue',
  'UntagQueue',
  'StartMessageMoveTask',
  'CancelMessageMoveTask',
];
const ON_MISSING = ['ReceiveMessage', 'DeleteQueue', 'CreateQueue'];
/**
 * A valid-looking core per action, which the generated fields then override, so requests get
 * past presence checks. `h` is a forged receipt handle: a real queue id and position, a wrong token.
 */
const BASE: Record<string, (h: string) => [json: Record<string, unknown>, query: string]> = {
  SendMessage: () => [{ MessageBody: 'x' }, 'MessageBody=x'],
  SendMessageBatch: () => [
    { Entries: [{ Id: 'a', MessageBody: 'x' }] },
    'SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x',
  ],
  SetQueueAttributes: () => [
    { Attributes: { DelaySeconds: '1' } },
    'Attribute.1.Name=DelaySeconds&Attribute.1.Value=1',
  ],
  TagQueue: () => [{ Tags: { a: 'b' } }, 'Tag.1.Key=a&Tag.1.Value=b'],
  UntagQueue: () => [{ TagKeys: ['a'] }, 'TagKey.1=a'],
  DeleteMessage: (h) => [{ ReceiptHandle: h }, `ReceiptHandle=${enc(h)}`],
  ChangeMessageVisibility: (h) => [
    { ReceiptHandle: h, VisibilityTimeout: 0 },
    `ReceiptHandle=${enc(h)}&VisibilityTimeout=0`,
  ],
  DeleteMessageBatch: (h) => [
    { Entries: [{ Id: 'a', ReceiptHandle: h }] },
    `DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.ReceiptHandle=${enc(h)}`,
  ],
  ChangeMessageVisibilityBatch: (h) => [
    { Entries: [{ Id: 'a', ReceiptHandle: h, VisibilityTimeout: 0 }] },
    `ChangeMessageVisibilityBatchRequestEntry.1.Id=a&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=${enc(h)}&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=0`,
  ],
  GetQueueAttributes: () => [{ AttributeNames: ['All'] }, 'AttributeName.1=All'],
  CreateQueue: () => [{ QueueName: '' }, 'QueueName='],
};
const JSON_FIELDS = [
  'QueueName',
  'MessageBody',
  'Entries',
  'Id',
  'ReceiptHandle',
  'VisibilityTimeout',
  'MaxNumberOfMessages',
  'Attributes',
  'AttributeNames',
  'MessageAttributes',
  'MessageAttributeNames',
  'MessageSystemAttributes',
  'Tags',
  'TagKeys',
  'DelaySeconds',
  'MaxResults',
  'NextToken',
  'SourceArn',
  'DestinationArn',
  'TaskHandle',
  'MessageGroupId',
  'MessageDeduplicationId',
  'Label',
];
const QUERY_NAMES = [
  'QueueName',
  'MessageBody',
  'ReceiptHandle',
  'VisibilityTimeout',
  'MaxNumberOfMessages',
  'DelaySeconds',
  'MaxResults',
  'NextToken',
  'Attribute.1.Name',
  'Attribute.1.Value',
  'AttributeName.1',
  'AttributeName.0',
  'MessageAttributeName.1',
  'TagKey.1',
  'Tag.1.Key',
  'Tag.1.Value',
  'MessageAttribute.1.Name',
  'MessageAttribute.1.Value.DataType',
  'MessageAttribute.1.Value.StringValue',
  'MessageAttribute.1.Value.BinaryValue',
  'MessageAttribute.1.Value.StringListValue.1',
  'SendMessageBatchRequestEntry.1.Id',
  'SendMessageBatchRequestEntry.1.MessageBody',
  'SendMessageBatchRequestEntry.99999999999.Id',
  'DeleteMessageBatchRequestEntry.1.Id',
  'DeleteMessageBatchRequestEntry.1.ReceiptHandle',
  'ChangeMessageVisibilityBatchRequestEntry.1.Id',
  'ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout',
  'Attribute..Name',
  'Attribute.-1.Name',
  'Version',
  'SourceArn',
  'TaskHandle',
  'MessageGroupId',
];

const hugeNumber = fc.constantFrom(
  '99999999999999999999999999',
  '-1',
  '1e400',
  '-0',
  '0x10',
  '1.5',
  'NaN',
  '9007199254740993',
  '',
);
const odd = fc.constantFrom(
  '%',
  '%zz',
  '%C3%28',
  '%ED%A0%80',
  '%00',
  '+',
  '&&',
  '==',
  '\u0000',
  '\uFFFE',
  '😀',
  '<x>&amp;',
  '\r\n',
);
const text = fc.oneof(fc.string({ maxLength: 40 }), hugeNumber, odd, fc.string({ unit: 'binary', maxLength: 20 }));
const jsonScalar = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(1e300),
  fc.bigInt().map(String),
);
const jsonValue = fc.oneof(
  { depthSize: 'small' },
  jsonScalar,
  fc.array(jsonScalar, { maxLength: 12 }),
  fc.dictionary(fc.string({ maxLength: 8 }), jsonScalar, { maxKeys: 4 }),
  fc.array(
    fc.dictionary(
      fc.constantFrom('Id', 'MessageBody', 'ReceiptHandle', 'VisibilityTimeout', 'DataType', 'StringValue'),
      jsonScalar,
    ),
    { maxLength: 12 },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
/** Percent-encodes every byte; unlike encodeURIComponent it accepts lone surrogates. */
const enc = (s: string) => Buffer.from(s, 'utf8').toString('hex').replace(/../g, '%$&');
const bytes = fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a));
const baseFor = (action: string, handle: string) => (Object.hasOwn(BASE, action) ? BASE[action]!(handle) : undefined);
/**
 * Handles of the Redrive format with a real-looking queue id and position (the control
 * queue's included) but a made-up token and seal: none may delete or change anything.
 */
const forgedHandles = (_controlQueueId: number) =>
  fc
    .record({
      queueId: fc.integer({ min: 1, max: 4 }),
      seq: fc.integer({ min: 1, max: 5 }),
      token: fc.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      mac: fc.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    })
    .map(({ queueId, seq, token, mac }) => Buffer.from(`rd1|${queueId}|${seq}|${token}|${mac}`).toString('base64'));

function arbitraries(controlPath: string, controlQueueId: number, sandboxPath: string, missingPath: string) {
  const forgedHandle = forgedHandles(controlQueueId);
  // Each action with the one queue (as a URL path) it may reach.
  const action = fc.oneof(
    { arbitrary: fc.constantFrom(...ON_CONTROL).map((a) => ({ a, home: controlPath })), weight: 4 },
    { arbitrary: fc.constantFrom(...ON_SANDBOX).map((a) => ({ a, home: sandboxPath })), weight: 4 },
    { arbitrary: fc.constantFrom(...ON_MISSING).map((a) => ({ a, home: missingPath })), weight: 1 },
    {
      arbitrary: fc
        .oneof(fc.string({ maxLength: 20 }), fc.constantFrom('constructor', '__proto__', 'toString'))
        .map((a) => ({ a, home: missingPath })),
      weight: 1,
    },
  );
  const queueUrl = (home: string) =>
    fc.oneof(
      fc.constant(`http://localhost${missingPath}`),
      text,
      { arbitrary: fc.constant(`http://localhost${home}`), weight: 4 },
      fc.constant(home.split('/').pop()!),
    );

  const jsonRequest = action.chain(({ a, home }) =>
    fc
      .record({
        target: fc.oneof({ arbitrary: fc.constant(`AmazonSQS.${a}`), weight: 16 }, fc.constant(a), text),
        fields: fc.dictionary(fc.constantFrom(...JSON_FIELDS), jsonValue, { maxKeys: 5 }),
        queueUrl: fc.option(queueUrl(home)),
        shape: fc.constantFrom('object', 'object', 'object', 'object', 'truncated', 'bytes', 'array', 'huge-number'),
        cut: fc.nat(),
        junk: bytes,
        mode: fc.boolean(),
        handle: forgedHandle,
      })
      .map(({ target, fields, queueUrl, shape, cut, junk, mode, handle }): Raw => {
        const payload = { ...baseFor(a, handle)?.[0], ...fields, ...(queueUrl === null ? {} : { QueueUrl: queueUrl }) };
        const full = JSON.stringify(payload);
        const body =
          shape === 'object'
            ? full
            : shape === 'truncated'
              ? full.slice(0, cut % (full.length + 1))
              : shape === 'array'
                ? `[${full}]`
                : shape === 'huge-number'
                  ? full.replace(/^\{/, '{"MaxNumberOfMessages":1e400,"VisibilityTimeout":-99999999999999999999,')
                  : junk;
        const headers: Record<string, string> = {
          'x-amz-target': target.replace(/[^\x20-\x7e]/g, '?'),
          'content-type': 'application/x-amz-json-1.0',
        };
        if (mode) headers['x-amzn-query-mode'] = 'true';
        return { method: 'POST', path: '/', headers, body: Buffer.from(body) };
      }),
  );

  const pair = fc
    .tuple(
      fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 12 })),
      fc.oneof(text, jsonScalar.map(String)),
      fc.boolean(),
    )
    .map(([k, v, raw]) => (raw ? `${k}=${v}` : `${enc(k)}=${enc(v)}`).replace(/[^\x21-\x7e]/g, (c) => enc(c)));
  const queryRequest = action.chain(({ a, home }) =>
    fc
      .record({
        pairs: fc.array(pair, { maxLength: 8 }),
        queueUrl: fc.option(queueUrl(home).map((u) => `QueueUrl=${enc(u)}`)),
        action: fc.oneof(
          { arbitrary: fc.constant(`Action=${enc(a)}`), weight: 16 },
          fc.constant('Action='),
          fc.constant(''),
        ),
        path: fc.constantFrom('/', missingPath, home, '/x/y/z', '/%zz', '/000000000000/%zz', '/000000000000/a/b'),
        get: fc.boolean(),
        contentType: fc.constantFrom('application/x-www-form-urlencoded', 'text/plain', 'application/json', ''),
        junk: fc.oneof({ arbitrary: fc.constant(null), weight: 7 }, bytes),
        handle: forgedHandle,
      })
      .map(({ pairs, queueUrl, action, path, get, contentType, junk, handle }): Raw => {
        const qs = [action, baseFor(a, handle)?.[1], ...pairs, queueUrl].filter(Boolean).join('&');
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        if (get) return { method: 'GET', path: `${path}?${qs}`, headers, body: Buffer.alloc(0) };
        return { method: 'POST', path, headers, body: junk ?? Buffer.from(qs) };
      }),
  );

  const garbage = fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      path: fc.constantFrom('/', '/console', '/000000000000', missingPath, '/a%2Fb', '/?', '/?&&=&', '/?Action'),
      body: bytes,
    })
    .map(({ method, path, body }): Raw => ({ method, path, headers: {}, body }));

  return fc.oneof(
    { arbitrary: jsonRequest, weight: 4 },
    { arbitrary: queryRequest, weight: 5 },
    { arbitrary: garbage, weight: 1 },
  );
}

/** What the answers were, reported as a test diagnostic to show how deep the fuzzer reaches. */
const seen = new Map<string, number>();

function checkAnswer(r: Raw, a: Answer): void {
  const protocol = r.headers['x-amz-target'] !== undefined ? 'json' : 'query';
  const code = `${protocol} ${String(a.headers['x-amzn-query-error'] ?? a.status).split(';')[0]}`;
  seen.set(code, (seen.get(code) ?? 0) + 1);
  const context = `${r.method} ${r.path} ${JSON.stringify(r.headers)} ${JSON.stringify(r.body.toString('latin1').slice(0, 300))}\n→ ${a.status} ${a.text.slice(0, 500)}`;
  assert.ok(a.status < 500, `server error: ${context}`);
  // The console answers its own paths (HTML pages, redirects, 404s); only the status matters here.
  if (/^\/console(?:[/?]|$)/.test(r.path)) return;
  if (r.method === 'POST' && r.headers['x-amz-target'] !== undefined) {
    assert.equal(a.headers['content-type'], 'application/x-amz-json-1.0', context);
    const body = JSON.parse(a.text) as Record<string, unknown>;
    assert.ok(body && typeof body === 'object' && !Array.isArray(body), context);
    if (a.status !== 200) {
      assert.match(String(body.__type), /^com\.amazonaws\.sqs#\w+$/, context);
      assert.equal(typeof body.message, 'string', context);
      assert.match(String(a.headers['x-amzn-query-error']), /^[\w.]+;(Sender|Receiver)$/, context);
    }
    return;
  }
  assert.equal(XMLValidator.validate(a.text), true, context);
  const doc = xml.parse(a.text) as Record<string, any>;
  if (a.status === 200) {
    const root = Object.keys(doc).find((k) => k !== '?xml')!;
    assert.match(root, /Response$/, context);
    assert.ok(doc[root].ResponseMetadata.RequestId, context);
    return;
  }
  assert.match(String(a.headers['x-amzn-query-error']), /^[\w.]+;(Sender|Receiver)$/, context);
  if (a.status === 404 && 'UnknownOperationException' in doc) return;
  const e = doc.ErrorResponse?.Error;
  assert.ok(e && (e.Type === 'Sender' || e.Type === 'Receiver') && e.Code && typeof e.Message === 'string', context);
}

describe('fuzz: malformed requests on both protocols', () => {
  let server: ServerProcess;
  let base: URL;
  let controlUrl: string;
  let controlQueueId: number;
  const state = async () => {
    const c = server.client();
    const { GetQueueAttributesCommand, ListQueueTagsCommand, ListQueuesCommand } = await import('@aws-sdk/client-sqs');
    const attrs = await c.send(new GetQueueAttributesCommand({ QueueUrl: controlUrl, AttributeNames: ['All'] }));
    const tags = await c.send(new ListQueueTagsCommand({ QueueUrl: controlUrl }));
    const queues = await c.send(new ListQueuesCommand({}));
    return { attributes: attrs.Attributes, tags: tags.Tags, listed: queues.QueueUrls?.includes(controlUrl) };
  };

  before(async () => {
    server = await startServerProcess({ storage: 'memory' });
    base = new URL(server.url);
    const { CreateQueueCommand, SendMessageBatchCommand, ReceiveMessageCommand } = await import('@aws-sdk/client-sqs');
    const c = server.client();
    await c.send(new CreateQueueCommand({ QueueName: 'sandbox' }));
    controlUrl = (
      await c.send(
        new CreateQueueCommand({
          QueueName: 'control',
          Attributes: { VisibilityTimeout: '300' },
          tags: { keep: 'me' },
        }),
      )
    ).QueueUrl!;
    await c.send(
      new SendMessageBatchCommand({
        QueueUrl: controlUrl,
        Entries: ['a', 'b', 'c', 'd'].map((Id) => ({
          Id,
          MessageBody: `body ${Id}`,
          MessageAttributes: { k: { DataType: 'String', StringValue: Id } },
        })),
      }),
    );
    // One message in flight, so forged receipt handles meet a real receipt.
    const { Messages } = await c.send(new ReceiveMessageCommand({ QueueUrl: controlUrl, MaxNumberOfMessages: 1 }));
    controlQueueId = Number(Buffer.from(Messages![0]!.ReceiptHandle!, 'base64').toString().split('|')[1]);
  });
  after(async () => {
    agent.destroy();
    await server.stop();
    server.cleanup();
  });

  it(`answers ${RUNS} generated requests well and changes nothing`, async (t) => {
    const before = await state();
    const controlPath = new URL(controlUrl).pathname;
    await fc.assert(
      fc.asyncProperty(
        arbitraries(controlPath, controlQueueId, '/000000000000/sandbox', '/000000000000/missing-queue'),
        async (r) => checkAnswer(r, await send(base, r)),
      ),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    );
    t.diagnostic(JSON.stringify(Object.fromEntries([...seen].sort((a, b) => b[1] - a[1]))));
    assert.equal(server.proc.exitCode, null, 'server exited');
    assert.deepEqual(await state(), before);
  });
});
