import { RE2JS } from 're2js';

/**
 * A policy's pattern, matched in time linear in the queue name whatever the pattern: RE2's
 * syntax and semantics (re2js, an automaton that never backtracks), so a pattern such as
 * `^([\w-]+)+!$` costs what any other does. RE2 has everything a queue-name pattern needs
 * (anchors, literals, classes and `\w`/`\d`/`\s`, `.`, `*`, `+`, `?`, `{n,m}`, alternation,
 * groups), with JavaScript's meaning; it has no backreferences or lookaround, and a pattern
 * that uses them is refused where it is set.
 */
export interface PolicyPattern {
  test(queueName: string): boolean;
}

/** The pattern compiled, or RE2's reason for refusing it. */
export function compilePattern(pattern: string): PolicyPattern | { error: string } {
  try {
    const re = RE2JS.compile(pattern);
    return { test: (queueName: string) => re.matcher(queueName).find() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Why a pattern is refused, or undefined when it is a pattern policies can use. */
export function patternError(pattern: string): string | undefined {
  const compiled = compilePattern(pattern);
  return 'error' in compiled ? compiled.error : undefined;
}
