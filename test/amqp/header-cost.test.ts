/**
 * The weighing of content headers before they are decoded (src/protocols/amqp/decoded-cost.ts):
 * any bytes are weighed without a throw, and a header under the caps is never refused nor
 * underestimated against what decoding it holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { field, type FieldValue } from '../../src/protocols/amqp/codec.js';
import { contentHeaderCost } from '../../src/protocols/amqp/decoded-cost.js';
import { decodeHeader, rawProperties } from '../../src/protocols/amqp/properties.js';

/** A basic content header's payload with these headers. */
function header(headers: Map<string, FieldValue>): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(60, 0);
  return Buffer.concat([head, rawProperties({ contentType: 'text/plain', headers })]);
}

const value: fc.Memo<FieldValue> = fc.memo((depth) =>
  depth <= 1
    ? fc.oneof(
        fc.constant(field.str('x')),
        fc.constant(field.bool(true)),
        fc.constant({ type: 'V', value: null } as FieldValue),
      )
    : fc.oneof(
        fc.constant(field.str('x')),
        fc.array(value(depth - 1), { maxLength: 5 }).map((a) => field.array(a)),
        fc
          .array(fc.tuple(fc.string({ maxLength: 4 }), value(depth - 1)), { maxLength: 5 })
          .map((e): FieldValue => ({ type: 'F', value: new Map(e) })),
      ),
);

test('any bytes are weighed without a throw', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const r = contentHeaderCost(Buffer.from(bytes));
      assert.ok('refused' in r || r.bytes >= 0);
    }),
    { numRuns: 5000 },
  );
});

test('a well-formed header is weighed at no less than its size, and the decoder agrees it is well-formed', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), value(4)), { maxLength: 8 }), (entries) => {
      const payload = header(new Map(entries));
      const r = contentHeaderCost(payload);
      assert.ok(!('refused' in r), JSON.stringify(r));
      assert.ok(r.bytes >= payload.length);
      decodeHeader(payload);
    }),
  );
});

test('too many values or too deep a nesting is refused before decoding', () => {
  const voids = header(
    new Map([['h', field.array(Array.from({ length: 20_000 }, () => ({ type: 'V', value: null }) as FieldValue))]]),
  );
  assert.deepEqual(contentHeaderCost(voids), {
    refused: 'content header tables would take more than 524288 bytes decoded',
  });
  let deep: FieldValue = field.str('x');
  for (let i = 0; i < 40; i++) deep = field.array([deep]);
  assert.deepEqual(contentHeaderCost(header(new Map([['d', deep]]))), {
    refused: 'content header tables nested more than 32 deep',
  });
});
