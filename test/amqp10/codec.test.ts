/**
 * The AMQP 1.0 codec: every value encodes and decodes back to itself (types kept), maps
 * decode as Maps, and random or mutated bytes never throw anything but a DecodeError nor
 * touch Object.prototype; lengths and counts cannot make the decoder allocate more than
 * the input holds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodeValue, DecodeError } from '../../src/protocols/amqp10/codec.js';
import { encodeValue } from '../../src/protocols/amqp10/encoder.js';
import { decodeMessage } from '../../src/protocols/amqp10/message.js';
import { decodePerformative, FrameParser } from '../../src/protocols/amqp10/frames.js';
import { mapGet, v, type Value } from '../../src/protocols/amqp10/types.js';

const scalar: fc.Arbitrary<Value> = fc.oneof(
  fc.constant<Value>({ type: 'null' }),
  fc.boolean().map(v.bool),
  fc.integer({ min: 0, max: 255 }).map(v.ubyte),
  fc.integer({ min: 0, max: 65535 }).map(v.ushort),
  fc.integer({ min: 0, max: 2 ** 32 - 1 }).map(v.uint),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map(v.int),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(v.ulong),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(v.long),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value): Value => ({ type: 'timestamp', value })),
  fc.double({ noNaN: true }).map((value): Value => ({ type: 'double', value })),
  fc.string({ unit: 'grapheme', maxLength: 300 }).map(v.string),
  fc.stringMatching(/^[a-z:-]{0,20}$/).map(v.symbol),
  fc.uint8Array({ maxLength: 300 }).map((b) => v.binary(Buffer.from(b))),
  fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b): Value => ({ type: 'uuid', value: Buffer.from(b) })),
);

const { value } = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 5 }).map(v.list),
    fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 4 }).map((e) => v.map(e)),
    fc.array(fc.stringMatching(/^[a-z]{0,8}$/), { maxLength: 5 }).map(v.symbolArray),
    fc.tuple(fc.integer({ min: 0, max: 255 }), tie('value')).map(([c, x]) => v.described(c, x)),
  ),
}));

/** Maps compared by entries (their keys are objects). */
function plain(x: Value): unknown {
  if (x.type === 'map') return { map: [...x.value].map(([k, y]) => [plain(k), plain(y)]) };
  if (x.type === 'list' || x.type === 'array') return { [x.type]: x.value.map(plain) };
  if (x.type === 'described') return { d: plain(x.descriptor), v: plain(x.value) };
  if (x.type === 'binary' || x.type === 'uuid') return { [x.type]: x.value.toString('hex') };
  return x;
}

function onlyDecodeErrors(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof DecodeError, `not a DecodeError: ${(e as Error)?.stack}`);
  }
}

describe('AMQP 1.0 codec', () => {
  test('every value round-trips with its type', () => {
    fc.assert(
      fc.property(value, (x) => {
        assert.deepEqual(plain(decodeValue(encodeValue(x))), plain(x));
      }),
      { numRuns: 2000 },
    );
  });

  test('decoded maps are Maps, and a __proto__ key stays a key', () => {
    const m = v.map([
      [v.string('__proto__'), v.string('x')],
      [v.symbol('constructor'), v.int(1)],
    ]);
    const back = decodeValue(encodeValue(m));
    assert.equal(back.type, 'map');
    assert.ok(back.type === 'map' && back.value instanceof Map);
    assert.deepEqual(mapGet(back, '__proto__'), v.string('x'));
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('random bytes, as a value, a frame, a performative or a message, only ever raise a DecodeError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const b = Buffer.from(bytes);
        onlyDecodeErrors(() => decodeValue(b));
        onlyDecodeErrors(() => decodePerformative(b));
        onlyDecodeErrors(() => decodeMessage(b));
        onlyDecodeErrors(() => new FrameParser(4096).push(b));
      }),
      { numRuns: 5000 },
    );
    assert.equal(Object.keys(Object.prototype).length, 0, 'nothing was added to Object.prototype');
  });

  test('mutated encodings only ever raise a DecodeError', () => {
    fc.assert(
      fc.property(
        value,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (x, flips) => {
          const b = Buffer.from(encodeValue(x));
          for (const [at, byte] of flips) if (b.length) b[at % b.length] = byte;
          onlyDecodeErrors(() => decodeValue(b));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('a count larger than the bytes is refused before anything is allocated', () => {
    // list32 of 8 bytes claiming 2^32-1 items; array32 of nulls claiming 2^32-1 elements.
    assert.throws(() => decodeValue(Buffer.from('d000000008ffffffff40404040', 'hex')), DecodeError);
    assert.throws(() => decodeValue(Buffer.from('f000000005ffffffff40', 'hex')), DecodeError);
    // A string claiming 4 GiB.
    assert.throws(() => decodeValue(Buffer.from('b1ffffffff41', 'hex')), DecodeError);
    // A list cut short, then nesting deeper than the bound (40 described values).
    assert.throws(() => decodeValue(Buffer.from('c0', 'hex')), DecodeError);
    const deep = Buffer.concat([
      Buffer.from('0053'.repeat(40).replace(/0053/g, '005300'), 'hex'),
      Buffer.from('40', 'hex'),
    ]);
    assert.throws(() => decodeValue(deep), DecodeError);
  });
});
