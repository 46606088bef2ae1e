/**
 * A node:test reporter (scripts/run-tests.mjs adds it beside `spec`): counts the tests
 * that skipped for a missing client, by group (scripts/skip-groups.mjs), and keeps every
 * other skipped test with its file and reason, so that none skips unsaid. At the end it
 * writes one JSON object `{ "groups": { "<group>": <tests> }, "others": [{ file, name,
 * reason }] }` to its destination for run-tests.mjs.
 */
import { relative } from 'node:path';
import { TAG_PATTERN } from './skip-groups.mjs';

export default async function* skippedGroups(source) {
  const groups = {};
  const others = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, file, name } = event.data;
    if (skip === undefined || skip === false) continue;
    const reason = typeof skip === 'string' ? skip : '';
    const match = TAG_PATTERN.exec(reason);
    if (match) groups[match[1]] = (groups[match[1]] ?? 0) + 1;
    else others.push({ file: file ? relative(process.cwd(), file) : '', name, reason });
  }
  yield `${JSON.stringify({ groups, others })}\n`;
}
