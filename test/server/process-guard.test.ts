/**
 * The process-level handlers of `redrive serve` (src/server/process-guard.ts): an error no
 * request path handled is logged with its stack, and the process goes on.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { guardProcess } from '../../src/server/process-guard.js';

test('an uncaught exception and an unhandled rejection are logged, and the process keeps running', () => {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const thrown = process.listeners('uncaughtException');
  const rejected = process.listeners('unhandledRejection');
  guardProcess(pino({ base: undefined }, sink));
  try {
    // Called as node calls them: emitting the events for real would also reach the test runner's own handlers.
    for (const l of process.listeners('uncaughtException'))
      if (!thrown.includes(l)) l(new Error('thrown outside any request'), 'uncaughtException');
    for (const l of process.listeners('unhandledRejection'))
      if (!rejected.includes(l)) l(new Error('rejected outside any request'), Promise.resolve());
  } finally {
    for (const l of process.listeners('uncaughtException'))
      if (!thrown.includes(l)) process.off('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection'))
      if (!rejected.includes(l)) process.off('unhandledRejection', l);
  }
  assert.equal(lines.length, 2);
  assert.match(lines[0]!.msg, /uncaught exception \(a bug\): logged, the server keeps serving/);
  assert.match(lines[0]!.err.stack, /thrown outside any request/);
  assert.match(lines[1]!.msg, /unhandled promise rejection \(a bug\): logged, the server keeps serving/);
  assert.match(lines[1]!.err.message, /rejected outside any request/);
});
