import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { actions } from '../../src/engine/actions/registry.js';
import { decodeInput } from '../../src/protocols/query/decode.js';
import { escapeXml, successXml } from '../../src/protocols/query/encode.js';
import { queryOperation } from '../../src/protocols/query/model.js';

const decode = (action: string, query: string) =>
  decodeInput(queryOperation(action)!.input, new Map(new URLSearchParams(query)));
/** A decoded map: keyed by the client, so a null-prototype object. */
const map = (entries: Record<string, unknown>) =>
  Object.assign(Object.create(null), entries) as Record<string, unknown>;

describe('query model coverage', () => {
  it('every action the engine serves has a Query operation (add Redrive-only ones to redrive-extensions.json)', () => {
    const missing = Object.keys(actions).filter((name) => !queryOperation(name));
    assert.deepEqual(missing, []);
  });
});

describe('query decoding', () => {
  it('reads flattened batch entries with nested attribute maps, as botocore writes them', () => {
    const input = decode(
      'SendMessageBatch',
      'QueueUrl=http%3A%2F%2Fh%2F1%2Fq' +
        '&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=hi+there&SendMessageBatchRequestEntry.1.DelaySeconds=5' +
        '&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=s&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=String' +
        '&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=v' +
        '&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1=x' +
        '&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Name=AWSTraceHeader' +
        '&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Value.DataType=String' +
        '&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Value.StringValue=Root%3D1' +
        '&SendMessageBatchRequestEntry.10.Id=b&SendMessageBatchRequestEntry.10.MessageBody=second',
    );
    assert.deepEqual(input, {
      QueueUrl: 'http://h/1/q',
      Entries: [
        {
          Id: 'a',
          MessageBody: 'hi there',
          DelaySeconds: 5,
          MessageAttributes: map({ s: { DataType: 'String', StringValue: 'v', StringListValues: ['x'] } }),
          MessageSystemAttributes: map({ AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1' } }),
        },
        { Id: 'b', MessageBody: 'second' },
      ],
    });
  });

  it('reads attribute maps, tag maps and name lists by their locationName', () => {
    assert.deepEqual(
      decode('CreateQueue', 'QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=3&Tag.1.Key=k&Tag.1.Value='),
      {
        QueueName: 'q',
        Attributes: map({ DelaySeconds: '3' }),
        tags: map({ k: '' }),
      },
    );
    assert.deepEqual(decode('TagQueue', 'Tag.1.Key=a&Tag.1.Value=b'), { Tags: map({ a: 'b' }) });
    assert.deepEqual(decode('UntagQueue', 'TagKey.1=a&TagKey.2=b'), { TagKeys: ['a', 'b'] });
    assert.deepEqual(
      decode('ReceiveMessage', 'AttributeName.2=B&AttributeName.1=A&MessageAttributeName.1=All&MaxNumberOfMessages=10'),
      {
        AttributeNames: ['A', 'B'],
        MessageSystemAttributeNames: ['A', 'B'],
        MessageAttributeNames: ['All'],
        MaxNumberOfMessages: 10,
      },
    );
    assert.deepEqual(decode('GetQueueAttributes', 'AttributeNames='), { AttributeNames: [] });
  });

  it('leaves unparsable numbers as text for the engine to reject, and keeps odd map keys as plain data', () => {
    assert.deepEqual(decode('ReceiveMessage', 'MaxNumberOfMessages=ten'), { MaxNumberOfMessages: 'ten' });
    const input = decode('CreateQueue', 'QueueName=q&Attribute.1.Name=__proto__&Attribute.1.Value=x');
    const attributes = input.Attributes as Record<string, string>;
    assert.equal(Object.getPrototypeOf(attributes), null);
    assert.deepEqual(Object.keys(attributes), ['__proto__']);
  });

  it("reads StartMessageMoveTask's selective-redrive Filter and DryRun (Redrive's additions to an SQS action)", () => {
    const input = decode(
      'StartMessageMoveTask',
      'SourceArn=arn%3Aaws%3Asqs%3Aus-east-1%3A000000000000%3Adlq&Filter.DeathReason=rejected' +
        '&Filter.MessageAttribute.Name=kind&Filter.MessageAttribute.Value=refund&Filter.DeadLetteredAfter=1700000000000&DryRun=true',
    );
    assert.deepEqual(input, {
      SourceArn: 'arn:aws:sqs:us-east-1:000000000000:dlq',
      Filter: {
        DeathReason: 'rejected',
        MessageAttribute: { Name: 'kind', Value: 'refund' },
        DeadLetteredAfter: 1700000000000,
      },
      DryRun: true,
    });
  });
});

describe('query encoding', () => {
  it('writes flattened lists and maps under their member names inside the result wrapper', () => {
    const xml = successXml(
      queryOperation('ReceiveMessage')!,
      {
        Messages: [
          {
            MessageId: 'm',
            Body: 'a\r\nb<&>',
            Attributes: { SenderId: 's' },
            MessageAttributes: { n: { DataType: 'Binary', BinaryValue: 'AAE=' } },
          },
        ],
      },
      'req-1',
    );
    assert.equal(XMLValidator.validate(xml), true);
    assert.match(
      xml,
      /^<\?xml version="1.0"\?><ReceiveMessageResponse xmlns="http:\/\/queue.amazonaws.com\/doc\/2012-11-05\/"><ReceiveMessageResult><Message>/,
    );
    assert.match(xml, /<Body>a&#xD;\nb&lt;&amp;&gt;<\/Body>/);
    assert.match(xml, /<Attribute><Name>SenderId<\/Name><Value>s<\/Value><\/Attribute>/);
    assert.match(
      xml,
      /<MessageAttribute><Name>n<\/Name><Value><BinaryValue>AAE=<\/BinaryValue><DataType>Binary<\/DataType><\/Value><\/MessageAttribute>/,
    );
    const parsed = new XMLParser().parse(xml);
    assert.equal(parsed.ReceiveMessageResponse.ResponseMetadata.RequestId, 'req-1');
  });

  it("writes StartMessageMoveTask's DryRun answer", () => {
    const xml = successXml(
      queryOperation('StartMessageMoveTask')!,
      { ApproximateNumberOfMessagesToMove: 7, ApproximateNumberOfMessagesToMoveIsLowerBound: true },
      'req-2',
    );
    assert.match(
      xml,
      /<StartMessageMoveTaskResult><ApproximateNumberOfMessagesToMove>7<\/ApproximateNumberOfMessagesToMove><ApproximateNumberOfMessagesToMoveIsLowerBound>true<\/ApproximateNumberOfMessagesToMoveIsLowerBound><\/StartMessageMoveTaskResult>/,
    );
  });

  it('never emits a character XML cannot carry', () => {
    assert.equal(escapeXml('a\u0000b\u0008c\uFFFE\uD800'), 'a\uFFFDb\uFFFDc\uFFFD\uFFFD');
  });
});
