/**
 * The topic trie (src/engine/amqp/topic-trie.ts) routes as the word-by-word definition of
 * topic matching does: a property test against a plain memoised matcher over random keys
 * and patterns, and the bound on its work.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { TopicTrie } from '../../src/engine/routing/topic-trie.js';
import { topicMatches as matches } from '../support/topic-definition.js';

const unlimited = { spend: () => true };
const words = (alphabet: string[]) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 7 }).map((w) => w.join('.'));

test('the trie matches exactly the patterns the definition matches, in binding order', () => {
  fc.assert(
    fc.property(
      fc.array(words(['a', 'b', '', '*', '#']), { maxLength: 12 }),
      words(['a', 'b', '']),
      (patterns, key) => {
        const expected = patterns.flatMap((p, i) => (matches(p, key) ? [i] : []));
        assert.deepEqual(new TopicTrie(patterns).match(key, unlimited), expected);
      },
    ),
    { numRuns: 3000 },
  );
});

test('one trie answers many keys alike (its marks are per step, not per key)', () => {
  fc.assert(
    fc.property(
      fc.array(words(['a', 'b', '*', '#']), { maxLength: 8 }),
      fc.array(words(['a', 'b']), { maxLength: 8 }),
      (patterns, keys) => {
        const trie = new TopicTrie(patterns);
        for (const key of keys)
          assert.deepEqual(
            trie.match(key, unlimited),
            patterns.flatMap((p, i) => (matches(p, key) ? [i] : [])),
          );
      },
    ),
  );
});

test('its work is counted: at most (key words × trie nodes) steps, and it stops when the budget runs out', () => {
  // Patterns that keep many `#` nodes alive: `#.a.#.a…` of 32 words, ten of them.
  const patterns = Array.from({ length: 10 }, (_, i) => `${'#.a.'.repeat(15)}#.b${i}`);
  const key = Array.from({ length: 128 }, () => 'a').join('.');
  let steps = 0;
  const counted = { spend: (n: number) => ((steps += n), true) };
  assert.deepEqual(new TopicTrie(patterns).match(key, counted), []);
  const nodes = 10 * 32 + 1;
  assert.ok(steps <= 128 * nodes, `${steps} steps`);
  let left = 1000;
  assert.equal(new TopicTrie(patterns).match(key, { spend: (n) => (left -= n) >= 0 }), undefined);
});
