/** The request decoders that keep text exactly as sent (src/protocols/utf8.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeUtf8, headerText, parseForm } from '../../src/protocols/utf8.js';

const LONE_SURROGATE = /\p{Cs}/u;

test('valid UTF-8 decodes as it is, BOM included', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => decodeUtf8(Buffer.from(s, 'utf8')) === s));
  assert.equal(decodeUtf8(Buffer.from('\ufeffx', 'utf8')), '\ufeffx');
});

test('each byte that is not UTF-8 becomes a lone surrogate; the valid text around it is kept', () => {
  assert.equal(decodeUtf8(Buffer.from([0x61, 0xff, 0xfe, 0x62])), 'a\udcff\udcfeb');
  for (const bad of [
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xe2, 0x82],
    [0xf8],
  ]) {
    const s = decodeUtf8(Buffer.from([0x78, ...bad, 0xc3, 0xa9]));
    assert.ok(s.startsWith('x') && s.endsWith('é') && LONE_SURROGATE.test(s), JSON.stringify(s));
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      let valid = true;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        valid = false;
      }
      return LONE_SURROGATE.test(decodeUtf8(bytes)) === !valid;
    }),
  );
});

test('form fields decode like URLSearchParams on valid input, and keep invalid bytes visible', () => {
  const read = (s: string | Buffer) => {
    const out: [string, string][] = [];
    parseForm(typeof s === 'string' ? Buffer.from(s, 'utf8') : s, (k, v) => out.push([k, v]));
    return out;
  };
  for (const s of ['a=1&b=x+y&c=%C3%A9&&d&=e&f=%zz&g=%4', 'Action=SendMessage&MessageBody=%F0%9F%98%80 é', '']) {
    assert.deepEqual(read(s), [...new URLSearchParams(s)]);
  }
  assert.deepEqual(read('MessageBody=bad%FF%FEutf8'), [['MessageBody', 'bad\udcff\udcfeutf8']]);
  assert.deepEqual(read(Buffer.from([0x62, 0x3d, 0xff])), [['b', '\udcff']]);
});

test('a header is read as the UTF-8 bytes sent', () => {
  assert.equal(headerText('Root=1-abc'), 'Root=1-abc');
  assert.equal(headerText(Buffer.from('é', 'utf8').toString('latin1')), 'é');
  assert.equal(headerText('\u00ff'), '\udcff');
});
