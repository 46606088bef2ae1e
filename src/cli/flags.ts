import { CliError } from './cli-error.js';

/** Parsing of flag values, with errors that name the flag and show a good value. */
export function positive(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`${flag} ${JSON.stringify(v)}: give a whole number, 1 or more`, { code: 'InvalidFlag' });
  return n;
}

export function seconds(v: string, flag: string, max: number): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > max)
    throw new CliError(`${flag} ${JSON.stringify(v)}: give a whole number of seconds, 0 to ${max}`, {
      code: 'InvalidFlag',
    });
  return n;
}

export function epochMs(v: string, flag: string): number {
  const t = Date.parse(v);
  if (Number.isNaN(t))
    throw new CliError(`${flag} ${JSON.stringify(v)}: give an ISO time, e.g. 2026-01-31T12:00:00Z`, {
      code: 'InvalidFlag',
    });
  return t;
}

/** `name=value` (an attribute, a tag). */
export function pair(v: string, flag: string): [string, string] {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new CliError(`${flag} ${JSON.stringify(v)}: give name=value`, { code: 'InvalidFlag' });
  return [v.slice(0, eq), v.slice(eq + 1)];
}

/** Collects a repeatable flag's values. */
export const collect = (v: string, all: string[] = []) => [...all, v];

export function jsonOrString(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
