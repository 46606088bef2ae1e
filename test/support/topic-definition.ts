/**
 * Topic matching by its definition, as routing matched each binding before the topic
 * trie: words split by `.`, `*` matches one word, `#` zero or more, memoised on
 * (pattern word, key word). The trie's property test and bench/topic-matching.ts compare
 * against it.
 */
export function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  const seen = new Map<number, boolean>();
  const match = (i: number, j: number): boolean => {
    const id = i * (k.length + 1) + j;
    const hit = seen.get(id);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (i === p.length) r = j === k.length;
    else if (p[i] === '#') r = match(i + 1, j) || (j < k.length && match(i, j + 1));
    else r = j < k.length && (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
    seen.set(id, r);
    return r;
  };
  return match(0, 0);
}
