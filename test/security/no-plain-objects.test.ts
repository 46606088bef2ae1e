/**
 * No client-controlled key reaches a plain object: in src/protocols/, src/server/ and
 * src/auth/, where client data is decoded (requests, signatures, the credentials file),
 * `Object.fromEntries(` (which makes a plain object of whatever keys it is given) and an
 * assignment by a computed key into an object made as `{}` are refused. Decoded tables are
 * `Map`s or `Object.create(null)` objects instead. A line whose keys are the code's own (a
 * model's member names, a table of constants) says so with an `allow-dynamic-key: <why>`
 * comment on it or on the line above.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Compiled to dist/test/security/: the repository is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FOLDERS = ['src/protocols', 'src/server', 'src/auth'];
const ALLOW = /allow-dynamic-key:\s*\S/;
/** How many lines may carry the allow comment: keep it small, fix real sites instead. */
const MAX_ALLOWED = 4;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Finding {
  line: number;
  text: string;
  allowed: boolean;
}

/** Variables made as `{}` (`const out: Record<string, T> = {}`), and `(x ??= {})[` sites. */
const EMPTY_OBJECT = /\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=\s*\{\s*\}/g;
const LAZY_EMPTY_OBJECT = /\(\s*[\w$.]+\s*\?\?=\s*\{\s*\}\s*\)\s*\[/;
/** `at[key] ??= {}`: a plain object made under a computed key (a path walker's step). */
const LAZY_STEP = /\[(?!\s*(?:'[^'\n]*'|"[^"\n]*"|\d+)\s*\])[^\]\n]*\]\s*(?:\?\?|\|\|)=\s*\{\s*\}/;
/** A key that is not a string or number literal. */
const COMPUTED_KEY = String.raw`\[(?!\s*(?:'[^'\n]*'|"[^"\n]*"|\d+)\s*\])[^\]\n]*\]\s*(?:\?\?|\|\||&&)?=(?!=)`;

/** The lines of one source text that break the rule. */
function plainObjectWrites(text: string): Finding[] {
  const lines = text.split('\n');
  const names = [...text.matchAll(EMPTY_OBJECT)].map((m) => m[1]!);
  const writes = names.map((n) => new RegExp(String.raw`(?<![\w$.])${n.replace(/\$/g, '\\$')}${COMPUTED_KEY}`));
  const found: Finding[] = [];
  lines.forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    if (/^\s*\*/.test(line)) return; // a doc comment
    const hit =
      code.includes('Object.fromEntries(') ||
      LAZY_STEP.test(code) ||
      (LAZY_EMPTY_OBJECT.test(code) && new RegExp(COMPUTED_KEY).test(code)) ||
      writes.some((w) => w.test(code));
    if (hit)
      found.push({ line: i + 1, text: line.trim(), allowed: ALLOW.test(line) || ALLOW.test(lines[i - 1] ?? '') });
  });
  return found;
}

test('the check finds what it should and passes what it should', () => {
  const hits = (s: string) => plainObjectWrites(s).map((f) => `${f.line}${f.allowed ? ' allowed' : ''}`);
  assert.deepEqual(hits('const o = Object.fromEntries(pairs);'), ['1']);
  assert.deepEqual(hits('const out: Record<string, unknown> = {};\nfor (const [k, v] of t) out[k] = v;'), ['2']);
  assert.deepEqual(hits('let out = {};\nout[key] ??= [];'), ['2']);
  assert.deepEqual(hits('(out ??= {})[name] = value;'), ['1']);
  assert.deepEqual(hits('for (const p of path) at = (at[p] ??= {}) as Record<string, unknown>;'), ['1']);
  assert.deepEqual(hits("// allow-dynamic-key: the model's names\n(out ??= {})[name] = value;"), ['2 allowed']);
  assert.deepEqual(hits("const out = {};\nout['literal'] = 1;\nout[0] = 2;\nout.x = out[k];"), []);
  assert.deepEqual(hits('const out = Object.create(null);\nout[k] = v;'), []);
  assert.deepEqual(hits('const m = new Map();\nm.set(k, v);\nconst o = { [k]: v };'), []);
  assert.deepEqual(hits('const out: X = {};\nother.out[k] = v;\nif (a[k] === out) {}'), []);
});

test('src/protocols, src/server and src/auth write no computed key into a plain object', () => {
  const findings = FOLDERS.flatMap((folder) =>
    sourceFiles(join(ROOT, folder)).flatMap((abs) =>
      plainObjectWrites(readFileSync(abs, 'utf8')).map((f) => ({ ...f, file: relative(ROOT, abs) })),
    ),
  );
  const refused = findings.filter((f) => !f.allowed).map((f) => `${f.file}:${f.line}: ${f.text}`);
  assert.deepEqual(
    refused,
    [],
    'decode client data into a Map or an Object.create(null) object (docs/security.md#decoders-and-prototypes); ' +
      'where the keys are the code\'s own, say why with an "allow-dynamic-key: <why>" comment',
  );
  const allowed = findings.filter((f) => f.allowed).map((f) => `${f.file}:${f.line}`);
  assert.ok(allowed.length <= MAX_ALLOWED, `the allow-list has grown: ${allowed.join(', ')}`);
});
