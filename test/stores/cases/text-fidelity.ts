import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

/**
 * Every character SQS accepts, at the edges of its set and of UTF-8's sequence lengths,
 * comes back from the store exactly as it went in: no store may normalise, trim or
 * replace text: a store, like a decoder, must never alter what a client sent.
 */
const EDGES = [
  '\t\n\r',
  ' ~',
  '\u007f\u0080',
  'é',
  '\u07ff\u0800',
  '\ud7ff',
  '\ue000',
  '\ufffd', // U+FFFD itself is valid text
  '\u{10000}',
  '😀',
  '\u{10ffff}',
  'e\u0301',
  '\ufeffBOM',
  ' trailing ',
  '\\u00e9 "quoted" \'single\'',
  '<&>',
];
const TEXT = EDGES.join('|');

export const textCases: CaseGroup = (open) => {
  describe('text fidelity', () => {
    const store = useStore(open);

    test('a body and attribute values come back character for character', async () => {
      const q = await makeQueue(store());
      const attributes = Object.fromEntries(
        EDGES.map((s, i) => [`a${i}`, { DataType: 'String.custom', StringValue: s }]),
      );
      const systemAttributes = { AWSTraceHeader: { DataType: 'String', StringValue: TEXT } };
      await store().messages.send(q.id, [newMessage(T, { body: TEXT, attributes, systemAttributes })]);
      const [m] = (await store().messages.receive(q.id, receiveRequest(T))).messages;
      assert.equal(m!.body, TEXT);
      assert.equal(Buffer.compare(Buffer.from(m!.body, 'utf8'), Buffer.from(TEXT, 'utf8')), 0);
      assert.deepEqual(m!.attributes, attributes);
      assert.deepEqual(m!.systemAttributes, systemAttributes);
    });

    test('queue attributes and tags come back character for character', async () => {
      const q = await makeQueue(store(), { tags: { [TEXT.slice(0, 100)]: TEXT.slice(0, 200) } });
      const policy = JSON.stringify({ Statement: [{ Sid: TEXT }] });
      await store().queues.update(q.id, { setAttributes: { Policy: policy }, setTags: { t: TEXT } });
      const back = await store().queues.byId(q.id);
      assert.equal(back!.attributes.Policy, policy);
      assert.deepEqual(back!.tags, { [TEXT.slice(0, 100)]: TEXT.slice(0, 200), t: TEXT });
    });
  });
};
