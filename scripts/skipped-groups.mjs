/**
 * A node:test reporter (scripts/run-tests.mjs adds it beside `spec`): counts the tests
 * that skipped for a missing client, by group (scripts/skip-groups.mjs), and at the end
 * writes one JSON object `{ "<group>": <tests> }` to its destination for run-tests.mjs.
 */
import { TAG_PATTERN } from './skip-groups.mjs';

export default async function* skippedGroups(source) {
  const counts = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const match = typeof event.data.skip === 'string' ? TAG_PATTERN.exec(event.data.skip) : null;
    if (match) counts[match[1]] = (counts[match[1]] ?? 0) + 1;
  }
  yield `${JSON.stringify(counts)}\n`;
}
