/**
 * A topic exchange's binding patterns in a trie of their words, as RabbitMQ keeps them: a
 * routing key walks it word by word, holding the set of trie nodes its words so far can
 * reach. Each step costs one look-up per node held, so matching costs at most
 * (key words × trie nodes), whatever the patterns, where matching each pattern alone
 * (as a backtracking or memoised matcher does) costs (key words × pattern words) per
 * binding. The steps are counted against a budget (routing.ts).
 *
 * Words are split by `.`; `*` matches one word, `#` zero or more. Runs of `#` are one `#`.
 */
interface TrieNode {
  words: Map<string, TrieNode>;
  star?: TrieNode;
  /** The node after a `#`: it stays in the set for any further word. */
  hash?: TrieNode;
  isHash: boolean;
  /** Positions of the patterns that end here. */
  ends: number[];
  /** The step that last put it in a set (each node once per step). */
  mark: number;
}

const node = (isHash = false): TrieNode => ({ words: new Map(), isHash, ends: [], mark: 0 });

/** Counts steps; `spend` is false once the budget is used up. */
export interface StepBudget {
  spend(steps: number): boolean;
}

export class TopicTrie {
  private readonly root = node();
  private step = 0;

  /** The trie of `patterns`; a match gives their positions in this list. */
  constructor(patterns: readonly string[]) {
    for (const [i, p] of patterns.entries()) this.add(p, i);
  }

  private add(pattern: string, position: number): void {
    let n = this.root;
    for (const w of pattern.split('.')) {
      if (w === '#') {
        if (!n.isHash) n = n.hash ??= node(true);
      } else if (w === '*') n = n.star ??= node();
      else {
        let next = n.words.get(w);
        if (!next) n.words.set(w, (next = node()));
        n = next;
      }
    }
    n.ends.push(position);
  }

  /** Positions of the patterns `key` matches, in ascending order; undefined when the budget ran out. */
  match(key: string, budget: StepBudget): number[] | undefined {
    let held: TrieNode[] = [];
    this.enter(held, this.root, ++this.step);
    for (const word of key.split('.')) {
      if (!budget.spend(held.length)) return undefined;
      const step = ++this.step;
      const next: TrieNode[] = [];
      for (const n of held) {
        if (n.isHash) this.enter(next, n, step);
        const w = n.words.get(word);
        if (w) this.enter(next, w, step);
        if (n.star) this.enter(next, n.star, step);
      }
      if (next.length === 0) return [];
      held = next;
    }
    const out: number[] = [];
    for (const n of held) out.push(...n.ends);
    return out.sort((a, b) => a - b);
  }

  /** Adds `n` to the set, with the `#` after it (which may match no word). */
  private enter(set: TrieNode[], n: TrieNode, step: number): void {
    if (n.mark === step) return;
    n.mark = step;
    set.push(n);
    if (n.hash) this.enter(set, n.hash, step);
  }
}
