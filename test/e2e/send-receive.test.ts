/** SendMessage and ReceiveMessage on standard queues over the JSON protocol. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type MessageAttributeValue,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError, counts, createQueue, invalidParameterValue, queueDoesNotExist, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const send = (
  QueueUrl: string,
  MessageBody: string,
  extra: Partial<ConstructorParameters<typeof SendMessageCommand>[0]> = {},
) => sqs.send(new SendMessageCommand({ QueueUrl, MessageBody, ...extra }));

/** The older AttributeNames parameter is typed for queue attributes but carries message ones. */
const legacyNames = (...names: string[]) => names as QueueAttributeName[];

const tooLong = (max: number) =>
  invalidParameterValue(`One or more parameters are invalid. Reason: Message must be shorter than ${max} bytes.`);

describe('SendMessage', () => {
  test('returns a message id and the MD5 of the body; no sequence number on a standard queue', async () => {
    const url = await createQueue(sqs, 'send-basic');
    const out = await send(url, 'message');
    assert.equal(out.MD5OfMessageBody, '78e731027d8fd50ed642340b7c9a63b3');
    assert.match(out.MessageId!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(out.SequenceNumber, undefined);
    assert.equal(out.MD5OfMessageAttributes, undefined);
    const [m] = await receive(sqs, url);
    assert.equal(m!.Body, 'message');
    assert.equal(m!.MessageId, out.MessageId);
    assert.equal(m!.MD5OfBody, '78e731027d8fd50ed642340b7c9a63b3');
  });

  test('message attributes of every type, with custom type suffixes, round-trip exactly', async () => {
    const url = await createQueue(sqs, 'send-attrs');
    const binary = Uint8Array.from([0, 1, 2, 254, 255, 10, 13]);
    const MessageAttributes: Record<string, MessageAttributeValue> = {
      s: { DataType: 'String', StringValue: 'hello ✓' },
      sc: { DataType: 'String.custom', StringValue: 'x' },
      n: { DataType: 'Number', StringValue: '-12.5e3' },
      nf: { DataType: 'Number.float', StringValue: '3.14' },
      b: { DataType: 'Binary', BinaryValue: binary },
      bg: { DataType: 'Binary.gif', BinaryValue: Uint8Array.from([71, 73, 70]) },
      'attr.1øßä': { DataType: 'String', StringValue: 'umlauts are fine' },
    };
    const out = await send(url, 'with attributes', { MessageAttributes });
    assert.match(out.MD5OfMessageAttributes!, /^[0-9a-f]{32}$/);
    const [m] = await receive(sqs, url, { MessageAttributeNames: ['All'] });
    assert.equal(m!.MD5OfMessageAttributes, out.MD5OfMessageAttributes);
    assert.deepEqual(Object.keys(m!.MessageAttributes!).sort(), Object.keys(MessageAttributes).sort());
    assert.deepEqual(m!.MessageAttributes!.s, { DataType: 'String', StringValue: 'hello ✓' });
    assert.deepEqual(m!.MessageAttributes!.sc, { DataType: 'String.custom', StringValue: 'x' });
    assert.deepEqual(m!.MessageAttributes!.nf, { DataType: 'Number.float', StringValue: '3.14' });
    assert.equal(m!.MessageAttributes!.b!.DataType, 'Binary');
    assert.deepEqual([...m!.MessageAttributes!.b!.BinaryValue!], [...binary]);
    assert.equal(m!.MessageAttributes!.bg!.DataType, 'Binary.gif');
  });

  test('MD5OfMessageAttributes matches the known SQS digest', async () => {
    const url = await createQueue(sqs, 'send-attr-md5');
    const out = await send(url, 'a', { MessageAttributes: { k: { DataType: 'String', StringValue: 'x' } } });
    assert.equal(out.MD5OfMessageAttributes, 'a45daa70926828a2f0a1db3418e6feb4');
    assert.equal(out.MD5OfMessageBody, '0cc175b9c0f1b6a831c399e269772661');
  });

  test('the AWSTraceHeader system attribute has its own MD5 and comes back when asked for', async () => {
    const url = await createQueue(sqs, 'send-trace');
    const AWSTraceHeader = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    const out = await send(url, 'traced', {
      MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: AWSTraceHeader } },
    });
    assert.equal(out.MD5OfMessageSystemAttributes, '5ae4d5d7636402d80f4eb6d213245a88');
    assert.equal(out.MD5OfMessageAttributes, undefined);
    const [m] = await receive(sqs, url, { MessageSystemAttributeNames: ['AWSTraceHeader'] });
    assert.deepEqual(m!.Attributes, { AWSTraceHeader });
    const plain = await send(url, 'untraced');
    assert.equal(plain.MD5OfMessageSystemAttributes, undefined);
  });

  test('a Binary attribute matches the MD5 SQS recorded for it', async () => {
    const url = await createQueue(sqs, 'send-binary-md5');
    const BinaryValue = Buffer.from('traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01', 'latin1');
    const out = await send(url, 'test', { MessageAttributes: { attr1: { DataType: 'Binary', BinaryValue } } });
    assert.equal(out.MD5OfMessageAttributes, '8cbe4db156db8a94db8b801b7addb984');
    const [m] = await receive(sqs, url, { MessageAttributeNames: ['All'] });
    assert.equal(m!.MD5OfMessageAttributes, '8cbe4db156db8a94db8b801b7addb984');
    assert.deepEqual(Buffer.from(m!.MessageAttributes!.attr1!.BinaryValue!), BinaryValue);
  });

  test('an attribute named like an object property round-trips', async () => {
    const url = await createQueue(sqs, 'send-proto-names');
    // A computed key makes `__proto__` an own property of the literal, not its prototype.
    const MessageAttributes = {
      ['__proto__']: { DataType: 'String', StringValue: 'p' },
      constructor: { DataType: 'String', StringValue: 'c' },
    };
    const out = await send(url, 'x', { MessageAttributes });
    const [m] = await receive(sqs, url, { MessageAttributeNames: ['All'] });
    assert.deepEqual(Object.keys(m!.MessageAttributes ?? {}).sort(), ['__proto__', 'constructor']);
    assert.equal(m!.MD5OfMessageAttributes, out.MD5OfMessageAttributes);
  });

  test('at most 10 message attributes', async () => {
    const url = await createQueue(sqs, 'send-attr-count');
    const attrs = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }]));
    await send(url, 'ten', { MessageAttributes: attrs(10) });
    await assertSqsError(send(url, 'eleven', { MessageAttributes: attrs(11) }), invalidParameterValue(/11/));
    assert.equal((await counts(sqs, url)).visible, 1);
  });

  test('invalid characters in the body are InvalidMessageContents', async () => {
    const url = await createQueue(sqs, 'send-bad-chars');
    for (const body of ['bad \x01 char', 'Invalid-\x00-\x08-\x13-\uFFFF', 'lone \uD800 surrogate']) {
      await assertSqsError(send(url, body), {
        name: 'InvalidMessageContents',
        status: 400,
        message: /Invalid characters/,
      });
    }
    // Allowed: tab, newline, carriage return, astral characters.
    await send(url, 'ok\t\n\r 😀 \uE000');
    assert.equal((await counts(sqs, url)).visible, 1);
  });

  test('invalid attributes are InvalidParameterValue', async () => {
    const url = await createQueue(sqs, 'send-bad-attrs');
    const str = (StringValue: string, DataType = 'String') => ({ DataType, StringValue });
    await assertSqsError(
      send(url, 'x', { MessageAttributes: { ErrorDetails: str('') } }),
      invalidParameterValue("Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."),
    );
    for (const value of ['has \x08 backspace', 'has \x0b vtab']) {
      await assertSqsError(send(url, 'x', { MessageAttributes: { a: str(value) } }), invalidParameterValue());
    }
    for (const name of ['aWs.x', 'AMAZON.x', '.lead', 'trail.', 'bang!', 'q?', 'n'.repeat(257)]) {
      await assertSqsError(
        send(url, 'x', { MessageAttributes: { [name]: str('v') } }),
        invalidParameterValue(/invalid/i),
      );
    }
    for (const type of ['Invalid', `Number.${'L'.repeat(256)}`]) {
      await assertSqsError(
        send(url, 'x', { MessageAttributes: { a: str('1', type) } }),
        invalidParameterValue(/invalid/i),
      );
    }
    await assertSqsError(
      send(url, 'x', { MessageAttributes: { a: str('abc', 'Number') } }),
      invalidParameterValue(/number/),
    );
    assert.equal((await counts(sqs, url)).visible, 0);
  });

  test('an empty body is rejected as a missing one', async () => {
    const url = await createQueue(sqs, 'send-empty');
    await assertSqsError(send(url, ''), {
      name: 'MissingParameter',
      status: 400,
      message: 'The request must contain the parameter MessageBody.',
    });
  });

  test('size counts body and attribute bytes against MaximumMessageSize', async () => {
    const url = await createQueue(sqs, 'send-size', { MaximumMessageSize: '1024' });
    const attr = { k: { DataType: 'String', StringValue: 'x' } }; // 1 + 6 + 1 = 8 bytes
    await send(url, 'a'.repeat(1024));
    await send(url, 'a'.repeat(1016), { MessageAttributes: attr });
    await assertSqsError(send(url, 'a'.repeat(1025)), tooLong(1024));
    await assertSqsError(send(url, 'a'.repeat(1017), { MessageAttributes: attr }), tooLong(1024));
    // Bytes, not characters: 'é' is two bytes in UTF-8.
    await send(url, 'é'.repeat(512));
    await assertSqsError(send(url, 'é'.repeat(513)), tooLong(1024));
    assert.equal((await counts(sqs, url)).visible, 3);
  });

  test('the default limit is 1 MiB', async () => {
    const url = await createQueue(sqs, 'send-1mib');
    await send(url, 'a'.repeat(1_048_576));
    await assertSqsError(send(url, 'a'.repeat(1_048_577)), tooLong(1_048_576));
    const [m] = await receive(sqs, url);
    assert.equal(m!.Body!.length, 1_048_576);
  });

  test('per-message DelaySeconds overrides the queue delay', async () => {
    const url = await createQueue(sqs, 'send-delay', { DelaySeconds: '5' });
    await send(url, 'queue-delay');
    await send(url, 'own-delay', { DelaySeconds: 10 });
    await send(url, 'no-delay', { DelaySeconds: 0 });
    assert.deepEqual(await counts(sqs, url), { visible: 1, inflight: 0, delayed: 2 });
    assert.deepEqual(
      (await receive(sqs, url, { MaxNumberOfMessages: 10 })).map((m) => m.Body),
      ['no-delay'],
    );
    await server.advanceClock(5_000);
    assert.deepEqual(
      (await receive(sqs, url, { MaxNumberOfMessages: 10 })).map((m) => m.Body),
      ['queue-delay'],
    );
    await server.advanceClock(4_999);
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(1);
    assert.deepEqual(
      (await receive(sqs, url)).map((m) => m.Body),
      ['own-delay'],
    );
  });

  test('DelaySeconds must be within 0..900', async () => {
    const url = await createQueue(sqs, 'send-delay-range');
    await assertSqsError(
      send(url, 'x', { DelaySeconds: 901 }),
      invalidParameterValue(
        'Value 901 for parameter DelaySeconds is invalid. Reason: Must be between 0 and 900, if provided.',
      ),
    );
    await assertSqsError(send(url, 'x', { DelaySeconds: -1 }), invalidParameterValue(/DelaySeconds/));
    await send(url, 'x', { DelaySeconds: 900 });
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 0, delayed: 1 });
  });

  test('the queue may be named by its bare name', async () => {
    const url = await createQueue(sqs, 'send-by-name');
    await send('send-by-name', 'by name');
    assert.equal((await receive(sqs, url))[0]!.Body, 'by name');
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertSqsError(send(`${server.url}/000000000000/missing`, 'x'), queueDoesNotExist);
  });
});

describe('ReceiveMessage', () => {
  test('MaxNumberOfMessages is 1 by default, at most 10', async () => {
    const url = await createQueue(sqs, 'recv-max');
    for (let i = 0; i < 15; i++) await send(url, `m${i}`);
    assert.equal((await receive(sqs, url)).length, 1);
    const ten = await receive(sqs, url, { MaxNumberOfMessages: 10 });
    assert.equal(ten.length, 10);
    assert.equal(new Set(ten.map((m) => m.MessageId)).size, 10);
    for (const bad of [11, 0]) {
      await assertSqsError(
        receive(sqs, url, { MaxNumberOfMessages: bad }),
        invalidParameterValue(
          `Value ${bad} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`,
        ),
      );
    }
    assert.equal((await receive(sqs, url, { MaxNumberOfMessages: 10 })).length, 4);
  });

  test('an empty queue answers with no Messages', async () => {
    const url = await createQueue(sqs, 'recv-empty');
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    assert.equal(out.Messages, undefined);
  });

  test('system attributes: All, each name, and names that do not apply', async () => {
    const url = await createQueue(sqs, 'recv-sysattrs');
    const sentAt = await server.advanceClock(0);
    await send(url, 'x');
    await server.advanceClock(1_500);
    const [m] = await receive(sqs, url, { MessageSystemAttributeNames: ['All'], VisibilityTimeout: 0 });
    assert.deepEqual(Object.keys(m!.Attributes!).sort(), [
      'ApproximateFirstReceiveTimestamp',
      'ApproximateReceiveCount',
      'SenderId',
      'SentTimestamp',
    ]);
    assert.equal(m!.Attributes!.SentTimestamp, String(sentAt));
    assert.equal(m!.Attributes!.ApproximateFirstReceiveTimestamp, String(sentAt + 1_500));
    assert.equal(m!.Attributes!.ApproximateReceiveCount, '1');
    assert.ok(m!.Attributes!.SenderId!.length > 0);

    for (const name of [
      'SenderId',
      'SentTimestamp',
      'ApproximateReceiveCount',
      'ApproximateFirstReceiveTimestamp',
    ] as const) {
      const [again] = await receive(sqs, url, { MessageSystemAttributeNames: [name], VisibilityTimeout: 0 });
      assert.deepEqual(Object.keys(again!.Attributes!), [name]);
    }
    // The older AttributeNames parameter works too; names that do not apply are dropped.
    const [legacy] = await receive(sqs, url, {
      AttributeNames: legacyNames('SenderId', 'SequenceNumber'),
      VisibilityTimeout: 0,
    });
    assert.deepEqual(Object.keys(legacy!.Attributes!), ['SenderId']);
    const [counted] = await receive(sqs, url, { AttributeNames: ['All'] });
    assert.equal(counted!.Attributes!.ApproximateReceiveCount, '7');
    assert.equal(counted!.Attributes!.ApproximateFirstReceiveTimestamp, String(sentAt + 1_500));
    // No names asked: no Attributes.
    await server.advanceClock(30_000);
    const [plain] = await receive(sqs, url);
    assert.equal(plain!.Attributes, undefined);
  });

  test('MessageAttributeNames: All, .*, prefix.*, exact names; unknown names match nothing', async () => {
    const url = await createQueue(sqs, 'recv-userattrs');
    const str = (StringValue: string) => ({ DataType: 'String', StringValue });
    const sent = await send(url, 'x', {
      MessageAttributes: { 'Help.Me': str('Me'), Hello: str('There'), General: str('Kenobi') },
    });
    // Digests recorded from SQS for these attributes: the MD5 covers the returned subset.
    const recordedMd5: Record<string, string> = {
      'General,Hello,Help.Me': '4c360f3fdafd970e05fae2f149d997f5',
      'General,Hello': 'fca026605781cb4126a1e9044df24232',
      Hello: 'a311262e065454b75da111d535b8dacd',
      'Hello,Help.Me': '83fee93c1bcd8b9a5a923ffacdc636c7',
    };
    assert.equal(sent.MD5OfMessageAttributes, recordedMd5['General,Hello,Help.Me']);
    const names = async (MessageAttributeNames: string[]) => {
      const [m] = await receive(sqs, url, { MessageAttributeNames, VisibilityTimeout: 0 });
      if (!m!.MessageAttributes) {
        assert.equal(m!.MD5OfMessageAttributes, undefined);
        return [];
      }
      const keys = Object.keys(m!.MessageAttributes).sort();
      assert.equal(m!.MD5OfMessageAttributes, recordedMd5[keys.join(',')]);
      return keys;
    };
    assert.deepEqual(await names(['All']), ['General', 'Hello', 'Help.Me']);
    assert.deepEqual(await names(['.*']), ['General', 'Hello', 'Help.Me']);
    assert.deepEqual(await names(['Hel.*']), ['Hello', 'Help.Me']);
    assert.deepEqual(await names(['Hello']), ['Hello']);
    assert.deepEqual(await names(['General', 'Hello']), ['General', 'Hello']);
    assert.deepEqual(await names(['*']), ['General', 'Hello', 'Help.Me']);
    assert.deepEqual(await names(['Nope']), []);
    // Names SQS would never store are not an error; they just match nothing.
    assert.deepEqual(await names(['AWS.']), []);
    assert.deepEqual(await names(['..foo']), []);
    assert.deepEqual(await names([]), []);
  });

  test('each receive gives a new receipt handle', async () => {
    const url = await createQueue(sqs, 'recv-handles');
    await send(url, 'x');
    const handles = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const [m] = await receive(sqs, url, { AttributeNames: legacyNames('ApproximateReceiveCount') });
      assert.equal(m!.Attributes!.ApproximateReceiveCount, String(i + 1));
      handles.add(m!.ReceiptHandle!);
      await sqs.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m!.ReceiptHandle!, VisibilityTimeout: 0 }),
      );
    }
    assert.equal(handles.size, 3);
  });

  test('VisibilityTimeout and WaitTimeSeconds are range-checked', async () => {
    const url = await createQueue(sqs, 'recv-ranges');
    await assertSqsError(receive(sqs, url, { VisibilityTimeout: 43_201 }), invalidParameterValue(/VisibilityTimeout/));
    await assertSqsError(receive(sqs, url, { VisibilityTimeout: -1 }), invalidParameterValue(/VisibilityTimeout/));
    await assertSqsError(receive(sqs, url, { WaitTimeSeconds: 21 }), invalidParameterValue(/WaitTimeSeconds/));
    await assertSqsError(receive(sqs, url, { WaitTimeSeconds: -1 }), invalidParameterValue(/WaitTimeSeconds/));
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertSqsError(receive(sqs, `${server.url}/000000000000/missing`), queueDoesNotExist);
  });
});
