/**
 * What SQS accepts and refuses of a client's input, and keeps of it, end to end over both
 * protocols against one server: bytes that are not UTF-8 (refused, never replaced), empty
 * tag and untag requests, AddPermission's limits and wording, and FIFO deduplication kept
 * across a switch of its scope. The AWS SDK v3 (JSON) and Debian's boto3 (Query); what no
 * SDK can send (bytes that are not UTF-8) goes as a raw request in each protocol.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { useBothProtocols, create, expectError, receive } from './both-protocols.js';
import { SDK_HEADER } from './helpers.js';

const { server, drivers, bothProtocols } = useBothProtocols();

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const INVALID_CHARACTERS =
  'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF';
/** Bytes that are not UTF-8: a stray continuation, an overlong slash, an encoded surrogate, a truncated sequence. */
const NOT_UTF8 = [
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xe2, 0x82]),
];
const VALID = Buffer.from('é €😀\ufffd', 'utf8');

async function post(body: Buffer, headers: Record<string, string>) {
  const res = await fetch(server().url, { method: 'POST', headers, body: new Uint8Array(body) });
  return { status: res.status, code: res.headers.get('x-amzn-query-error')?.split(';')[0], text: await res.text() };
}
const json = (target: string, parts: (string | Buffer)[]) =>
  post(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))), {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `AmazonSQS.${target}`,
  });
const query = (parts: (string | Buffer)[]) =>
  post(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))), {
    'content-type': 'application/x-www-form-urlencoded',
    ...SDK_HEADER,
  });
const percent = (b: Buffer) => [...b].map((x) => `%${x.toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('bytes that are not UTF-8 are refused, never replaced', () => {
  let url: string;
  before(async () => {
    url = await create(drivers[0]!, 'utf8-audit');
  });

  test('JSON: a body, a String and a Number attribute value, a tag value, a queue attribute', async () => {
    for (const bad of NOT_UTF8) {
      const body = await json('SendMessage', [`{"QueueUrl":"${url}","MessageBody":"bad`, bad, `utf8"}`]);
      assert.equal(body.status, 400, body.text);
      assert.equal(body.code, 'InvalidMessageContents');
      assert.equal(JSON.parse(body.text).message, INVALID_CHARACTERS);
      for (const type of ['String', 'Number']) {
        const attr = await json('SendMessage', [
          `{"QueueUrl":"${url}","MessageBody":"ok","MessageAttributes":{"a":{"DataType":"${type}","StringValue":"1`,
          bad,
          `"}}}`,
        ]);
        assert.equal(attr.code, 'InvalidParameterValue', attr.text);
      }
      const batch = await json('SendMessageBatch', [
        `{"QueueUrl":"${url}","Entries":[{"Id":"a","MessageBody":"x`,
        bad,
        `"}]}`,
      ]);
      assert.equal(JSON.parse(batch.text).Failed?.[0]?.Code, 'InvalidMessageContents', batch.text);
      assert.equal(
        (await json('TagQueue', [`{"QueueUrl":"${url}","Tags":{"t":"`, bad, `"}}`])).code,
        'InvalidParameterValue',
      );
      assert.equal(
        (
          await json('SetQueueAttributes', [
            `{"QueueUrl":"${url}","Attributes":{"Policy":"{\\"Id\\":\\"`,
            bad,
            `\\"}"}}`,
          ])
        ).code,
        'InvalidAttributeValue',
      );
    }
    assert.deepEqual(await receive(drivers[0]!, url), [], 'nothing was stored');
    assert.deepEqual((await drivers[0]!.call('ListQueueTags', { QueueUrl: url })).Tags, undefined);
  });

  test('Query: percent-encoded and raw, in the body, an attribute value and the query string', async () => {
    for (const bad of NOT_UTF8) {
      for (const enc of [percent(bad), bad]) {
        const r = await query([`Action=SendMessage&QueueUrl=${encodeURIComponent(url)}&MessageBody=bad`, enc, 'utf8']);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.code, 'InvalidMessageContents');
        assert.match(r.text, /<Message>Invalid characters found\./);
        const attr = await query([
          `Action=SendMessage&QueueUrl=${encodeURIComponent(url)}&MessageBody=ok&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=`,
          enc,
        ]);
        assert.equal(attr.code, 'InvalidParameterValue', attr.text);
      }
      const res = await fetch(
        `${server().url}/?Action=SendMessage&QueueUrl=${encodeURIComponent(url)}&MessageBody=x${percent(bad)}`,
      );
      assert.equal(res.headers.get('x-amzn-query-error'), 'InvalidMessageContents;Sender');
    }
    assert.deepEqual(await receive(drivers[0]!, url), [], 'nothing was stored');
  });

  test('valid UTF-8 is stored byte for byte, with the MD5 of the bytes sent', async () => {
    const expected = md5(Buffer.concat([Buffer.from('x'), VALID]));
    const viaJson = await json('SendMessage', [`{"QueueUrl":"${url}","MessageBody":"x`, VALID, '"}']);
    assert.equal(JSON.parse(viaJson.text).MD5OfMessageBody, expected, viaJson.text);
    for (const enc of [percent(VALID), VALID]) {
      const viaQuery = await query([`Action=SendMessage&QueueUrl=${encodeURIComponent(url)}&MessageBody=x`, enc]);
      assert.match(viaQuery.text, new RegExp(`<MD5OfMessageBody>${expected}</MD5OfMessageBody>`));
    }
    const got = await receive(drivers[0]!, url, { MaxNumberOfMessages: 10 });
    assert.equal(got.length, 3);
    for (const m of got) assert.equal(m.Body, `x${VALID.toString('utf8')}`);
  });
});

bothProtocols('UntagQueue with no keys and TagQueue with no tags are refused', async (api, q) => {
  const url = await create(api, q('tags'));
  await expectError(
    api.call('UntagQueue', { QueueUrl: url, TagKeys: [] }),
    'InvalidParameterValue',
    'Tag keys must be between 1 and 128 characters in length.',
  );
  await expectError(
    api.call('UntagQueue', { QueueUrl: url, TagKeys: ['a', ''] }),
    'InvalidParameterValue',
    'Tag keys must be between 1 and 128 characters in length.',
  );
  await expectError(
    api.call('TagQueue', { QueueUrl: url, Tags: {} }),
    'MissingParameter',
    'The request must contain the parameter Tags.',
  );
  await api.call('TagQueue', { QueueUrl: url, Tags: { a: '1' } });
  await api.call('UntagQueue', { QueueUrl: url, TagKeys: ['a'] });
});

bothProtocols('AddPermission: at most 7 actions, and SQS wording for an action it cannot grant', async (api, q) => {
  const url = await create(api, q('perm'));
  const grant = (Actions: string[]) =>
    api.call('AddPermission', { QueueUrl: url, Label: 'l', AWSAccountIds: ['111111111111'], Actions });
  const eight = [
    'SendMessage',
    'ReceiveMessage',
    'DeleteMessage',
    'ChangeMessageVisibility',
    'GetQueueAttributes',
    'GetQueueUrl',
    'ListDeadLetterSourceQueues',
    'PurgeQueue',
  ];
  await expectError(grant([]), 'MissingParameter', 'The request must contain the parameter Actions.');
  await expectError(
    api.call('AddPermission', { QueueUrl: url, Label: 'l', AWSAccountIds: [], Actions: ['SendMessage'] }),
    'InvalidParameterValue',
    'Value [] for parameter PrincipalId is invalid. Reason: Unable to verify.',
  );
  await expectError(grant(eight), 'OverLimit', '8 Actions were found, maximum allowed is 7.');
  await expectError(
    grant(['Frobnicate']),
    'InvalidParameterValue',
    'Value SQS:Frobnicate for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions.',
  );
  await expectError(
    grant(['DeleteQueue']),
    'InvalidParameterValue',
    'Value SQS:DeleteQueue for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.',
  );
  assert.equal(
    (await api.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['Policy'] })).Attributes,
    undefined,
    'no partial state',
  );
  await grant(eight.slice(0, 7));
});

bothProtocols(
  'a FIFO queue switched from queue to messageGroup deduplication keeps deduplicating across groups',
  async (api, q) => {
    const highThroughput = { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' };
    const sendTwice = async (url: string) => {
      const first = await api.call('SendMessage', {
        QueueUrl: url,
        MessageBody: 'one',
        MessageGroupId: '4',
        MessageDeduplicationId: 'same',
      });
      const [m] = await receive(api, url);
      await api.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: m!.ReceiptHandle });
      const second = await api.call('SendMessage', {
        QueueUrl: url,
        MessageBody: 'two',
        MessageGroupId: '5',
        MessageDeduplicationId: 'same',
      });
      return { first: first.MessageId as string, second: second.MessageId as string, after: await receive(api, url) };
    };
    const switched = await create(api, q('switched.fifo'), { FifoQueue: 'true', DeduplicationScope: 'queue' });
    await api.call('SetQueueAttributes', { QueueUrl: switched, Attributes: highThroughput });
    const attrs = (await api.call('GetQueueAttributes', { QueueUrl: switched, AttributeNames: ['All'] }))
      .Attributes as Record<string, string>;
    assert.equal(attrs.DeduplicationScope, 'messageGroup');
    assert.ok(
      Object.keys(attrs).every((k) => /^[A-Z]/.test(k)),
      `no internal attribute shown: ${Object.keys(attrs).join(', ')}`,
    );
    const a = await sendTwice(switched);
    assert.equal(a.second, a.first, 'a duplicate: the first message id comes back');
    assert.deepEqual(a.after, [], 'and nothing new is delivered');
    // Created with messageGroup: per group, as documented.
    const born = await create(api, q('born.fifo'), { FifoQueue: 'true', ...highThroughput });
    const b = await sendTwice(born);
    assert.notEqual(b.second, b.first);
    assert.deepEqual(
      b.after.map((m) => m.Body),
      ['two'],
    );
  },
);
