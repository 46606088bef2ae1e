/**
 * Property-based tests of every decoder a client reaches, with random and adversarial
 * inputs (prototype-shaped keys, deep nesting, truncated and oversized lengths): AMQP
 * frames, methods, field tables and content headers, the typed-JSON properties of an
 * imported AMQP message, JSON and Query request decoding, SigV4 headers, the management
 * API's list parameters and the config file. For each: no error escapes but the
 * decoder's own, Object.prototype is unchanged, and the slowest input is reported and
 * held under a generous bound (a decoder that went superlinear would blow far past it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { AmqpError } from '../../src/engine/kernel/amqp-errors.js';
import { SqsError } from '../../src/engine/kernel/errors.js';
import { actions } from '../../src/engine/actions/registry.js';
import { DecodeError, Reader, Writer } from '../../src/protocols/amqp/codec.js';
import { FrameParser } from '../../src/protocols/amqp/frames.js';
import { decodeHeader } from '../../src/protocols/amqp/properties.js';
import { amqpPropertyCodec } from '../../src/protocols/amqp/property-json.js';
import { decodeMethod } from '../../src/protocols/amqp/spec.js';
import { nullPrototypeMaps } from '../../src/protocols/json/map-members.js';
import { decodeInput } from '../../src/protocols/query/decode.js';
import { queryOperation } from '../../src/protocols/query/model.js';
import { parseForm } from '../../src/protocols/utf8.js';
import { checkSignature, readSignature } from '../../src/auth/sigv4.js';
import { ConfigError, loadConfigFile } from '../../src/server/config-file.js';
import { ListError, listBody, parseListQuery } from '../../src/server/management/pagination.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** Per input: generous, so only a decoder gone superlinear (or stuck) exceeds it. */
const MAX_MS_PER_INPUT = 1000;

const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'Policy', 'valueOf'];
const key = fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string({ maxLength: 12 }));
/** JSON values whose objects use hostile keys, nested. */
const hostileJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;
/** JSON text with hostile keys written as text (an object literal would set the prototype instead). */
const hostileJsonText = hostileJson.map((v) => JSON.stringify(v));

const prototypeSnapshot = () =>
  [Object.prototype, Array.prototype, Function.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join(','));

/** Runs `property` over `arb`, allowing only the errors `allowed` accepts; reports the slowest input. */
function check<T>(
  ctx: TestContext,
  name: string,
  arb: fc.Arbitrary<T>,
  run: (v: T) => unknown,
  allowed: (e: unknown) => boolean,
) {
  const before = prototypeSnapshot();
  let slowest = 0;
  fc.assert(
    fc.property(arb, (v) => {
      const started = performance.now();
      try {
        run(v);
      } catch (e) {
        if (!allowed(e)) throw e;
      }
      const ms = performance.now() - started;
      slowest = Math.max(slowest, ms);
      assert.ok(ms < MAX_MS_PER_INPUT, `${name}: one input took ${ms.toFixed(1)} ms`);
      assert.equal(({} as Record<string, unknown>).Policy, undefined, `${name}: Object.prototype gained Policy`);
    }),
    { numRuns: RUNS },
  );
  assert.deepEqual(prototypeSnapshot(), before, `${name}: the intrinsics' own properties changed`);
  ctx.diagnostic(`${name}: ${RUNS} inputs, slowest ${slowest.toFixed(2)} ms`);
}

const amqpErrors = (e: unknown) => e instanceof AmqpError || e instanceof DecodeError || e instanceof RangeError;

/** A field table's bytes from hostile names and random values, with random lengths sometimes wrong. */
const tableBytes = fc
  .tuple(
    fc.array(fc.tuple(key, fc.constantFrom(...'tbBsuIilTfdDSxAFV'), fc.uint8Array({ maxLength: 12 })), {
      maxLength: 8,
    }),
    fc.integer({ min: -4, max: 4 }),
  )
  .map(([entries, skew]) => {
    const w = new Writer();
    for (const [name, type, bytes] of entries) {
      if (Buffer.byteLength(name) > 255) continue;
      w.shortstr(name).octet(type.charCodeAt(0)).bytes(Buffer.from(bytes));
    }
    const body = w.result();
    const out = Buffer.alloc(4 + body.length);
    out.writeUInt32BE(Math.max(0, body.length + skew), 0);
    body.copy(out, 4);
    return out;
  });

test('AMQP frames, methods, field tables and content headers', (ctx) => {
  check(
    ctx,
    'frames',
    fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }),
    (chunks) => {
      const p = new FrameParser(4096);
      for (const c of chunks) {
        p.push(Buffer.from(c));
        for (let f = p.next(); f; f = p.next()) if (f.type === 1) decodeMethod(f.payload);
      }
    },
    amqpErrors,
  );
  check(ctx, 'field tables', tableBytes, (b) => new Reader(b).table(), amqpErrors);
  check(
    ctx,
    'methods',
    fc.tuple(
      fc.constantFrom(10, 20, 40, 50, 60, 85),
      fc.integer({ min: 0, max: 120 }),
      tableBytes,
      fc.uint8Array({ maxLength: 32 }),
    ),
    ([classId, methodId, table, rest]) => {
      const head = Buffer.alloc(4);
      head.writeUInt16BE(classId, 0);
      head.writeUInt16BE(methodId, 2);
      decodeMethod(Buffer.concat([head, Buffer.from(rest), table]));
    },
    amqpErrors,
  );
  check(
    ctx,
    'content headers',
    fc.tuple(fc.integer({ min: 0, max: 0xffff }), tableBytes, fc.uint8Array({ maxLength: 32 })),
    ([flags, table, rest]) => {
      const head = Buffer.alloc(14);
      head.writeUInt16BE(60, 0);
      head.writeUInt16BE(flags, 12);
      decodeHeader(Buffer.concat([head, table, Buffer.from(rest)]));
    },
    amqpErrors,
  );
  // Imported AMQP properties (typed JSON): its errors are plain Errors with the field's name.
  check(
    ctx,
    'typed-JSON properties',
    fc.oneof(hostileJsonText, fc.constant('{"headers": {"__proto__": {"type": "S", "value": "x"}}}')),
    (text) => amqpPropertyCodec.fromJson(JSON.parse(text)),
    (e) => e instanceof Error && !(e instanceof TypeError),
  );
});

test('JSON and Query request decoding', (ctx) => {
  const names = Object.keys(actions);
  check(
    ctx,
    'JSON maps',
    fc.tuple(fc.constantFrom(...names), hostileJsonText),
    ([action, text]) => {
      const input = JSON.parse(text) as unknown;
      if (!input || typeof input !== 'object' || Array.isArray(input)) return;
      nullPrototypeMaps(action, input as Record<string, unknown>);
    },
    () => false,
  );
  // Query parameter names shaped like the model's (maps, lists, nesting) with hostile keys and values.
  const part = fc.oneof(
    fc.constantFrom(
      'Attribute',
      'MessageAttribute',
      'Tag',
      'Entry',
      'Name',
      'Value',
      'Key',
      'member',
      'entry',
      'DataType',
    ),
    fc.integer({ min: 0, max: 12 }).map(String),
    key,
  );
  const param = fc.tuple(
    fc.array(part, { minLength: 1, maxLength: 5 }).map((p) => p.join('.')),
    fc.oneof(key, fc.string()),
  );
  check(
    ctx,
    'Query parameters',
    fc.tuple(fc.constantFrom(...names), fc.array(param, { maxLength: 16 }), fc.uint8Array({ maxLength: 64 })),
    ([action, params, form]) => {
      decodeInput(queryOperation(action)?.input, new Map(params));
      const parsed = new Map<string, string>();
      parseForm(Buffer.from(form), (k, v) => parsed.set(k, v));
      decodeInput(queryOperation(action)?.input, parsed);
    },
    (e) => e instanceof SqsError,
  );
});

test('SigV4 headers and presigned URLs', (ctx) => {
  const field = fc.oneof(
    key,
    fc.string({ maxLength: 40 }),
    fc.constant('AKIDEXAMPLE/20260101/us-east-1/sqs/aws4_request'),
    fc.constant('host;x-amz-date'),
  );
  const header = fc
    .array(
      fc.tuple(fc.constantFrom('Credential', 'SignedHeaders', 'Signature', '__proto__', 'constructor', ''), field),
      {
        maxLength: 6,
      },
    )
    .map((fields) => `AWS4-HMAC-SHA256 ${fields.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  const query = fc
    .array(
      fc.tuple(
        fc.constantFrom(
          'X-Amz-Algorithm',
          'X-Amz-Credential',
          'X-Amz-Date',
          'X-Amz-Expires',
          'X-Amz-SignedHeaders',
          'X-Amz-Signature',
          '__proto__',
        ),
        field,
      ),
    )
    .map((pairs) => new URLSearchParams([['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'], ...pairs]).toString());
  check(
    ctx,
    'SigV4',
    fc.tuple(fc.option(header), fc.string({ maxLength: 20 }), query),
    ([authorization, date, q]) => {
      const headers = { host: '127.0.0.1:9324', 'x-amz-date': date, ...(authorization ? { authorization } : {}) };
      const req = { method: 'POST', path: '/', query: authorization ? '' : q, headers, body: Buffer.alloc(0) };
      const sig = readSignature(req);
      if (sig) checkSignature(req, sig, Date.now());
    },
    (e) => e instanceof SqsError,
  );
});

test("the management API's list parameters", (ctx) => {
  const path = fc.array(key, { minLength: 1, maxLength: 5 }).map((p) => p.join('.'));
  const item = hostileJson.map((v) => ({ name: 'c', client_properties: v, ...(typeof v === 'object' ? v : {}) }));
  check(
    ctx,
    'columns and sort',
    fc.tuple(fc.array(path, { maxLength: 6 }), path, fc.array(item, { maxLength: 4 })),
    ([columns, sort, items]) => {
      const q = parseListQuery(new URLSearchParams({ columns: columns.join(','), sort }).toString());
      JSON.stringify(listBody(items as Record<string, unknown>[], q, { total: items.length, filtered: items.length }));
    },
    (e) => e instanceof ListError,
  );
});

test("the management API sorts by a field that holds a client's table, after the fields it can order", () => {
  // An AMQP client's property table has no prototype, so `<` cannot turn it into a primitive.
  const items = [
    { name: 'table', client_properties: { p: Object.create(null) } },
    { name: 'number', client_properties: { p: 1 } },
  ];
  const body = listBody(items, parseListQuery('sort=client_properties.p'), { total: 2, filtered: 2 });
  assert.deepEqual(
    (body as { name: string }[]).map((x) => x.name),
    ['number', 'table'],
  );
});

test('the config file, JSON and YAML', async (ctx) => {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-config-fuzz-'));
  const yamlText = fc
    .array(fc.tuple(key, fc.oneof(key, fc.string({ maxLength: 10 })), fc.nat(3)), { maxLength: 8 })
    .map((lines) =>
      lines.map(([k, v, indent]) => `${'  '.repeat(indent)}${JSON.stringify(k)}: ${JSON.stringify(v)}`).join('\n'),
    );
  const structured = hostileJson.map((queues) =>
    JSON.stringify({ queues: [{ name: 'q', attributes: queues, tags: queues }] }),
  );
  const before = prototypeSnapshot();
  let slowest = 0;
  let i = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(hostileJsonText, structured, yamlText, fc.string({ maxLength: 60 })),
      fc.boolean(),
      async (text, yaml) => {
        const file = join(dir, `c${i++}.${yaml ? 'yaml' : 'json'}`);
        writeFileSync(file, text);
        const started = performance.now();
        await loadConfigFile(file).catch((e: unknown) => {
          if (!(e instanceof ConfigError)) throw e;
        });
        const ms = performance.now() - started;
        slowest = Math.max(slowest, ms);
        assert.ok(ms < MAX_MS_PER_INPUT, `config: one file took ${ms.toFixed(1)} ms`);
        assert.equal(({} as Record<string, unknown>).Policy, undefined);
      },
    ),
    { numRuns: Math.min(RUNS, 200) },
  );
  assert.deepEqual(prototypeSnapshot(), before);
  ctx.diagnostic(`config file: slowest ${slowest.toFixed(2)} ms`);
});
