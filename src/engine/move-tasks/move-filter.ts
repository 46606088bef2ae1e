import { errors } from '../kernel/errors.js';
import type { StoredMessage } from '../kernel/types.js';
import { DEATH_REASONS, isDeathReason } from '../../wire/deaths.js';
import type { MoveFilter } from '../../wire/move-tasks.js';

export type { MoveFilter };

const KEYS = [
  'MessageAttribute',
  'BodyContains',
  'BodyJsonPath',
  'Equals',
  'DeadLetterQueueSourceArn',
  'DeadLetteredAfter',
  'DeadLetteredBefore',
  'DeathReason',
];

const bad = (reason: string) =>
  errors.invalidParameterValue(`Value for parameter Filter is invalid. Reason: ${reason}`);

export function parseMoveFilter(v: unknown): MoveFilter | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad('Filter must be a map.');
  const f = v as Record<string, unknown>;
  const unknown = Object.keys(f).find((k) => !KEYS.includes(k));
  if (unknown) throw bad(`Unknown field ${unknown}; supported: ${KEYS.join(', ')}.`);
  const attr = f.MessageAttribute as Record<string, unknown> | undefined;
  if (attr !== undefined && (!attr || typeof attr.Name !== 'string' || typeof attr.Value !== 'string')) {
    throw bad('MessageAttribute must have a string Name and Value.');
  }
  for (const k of ['BodyContains', 'BodyJsonPath', 'DeadLetterQueueSourceArn'] as const) {
    if (f[k] !== undefined && typeof f[k] !== 'string') throw bad(`${k} must be a string.`);
  }
  for (const k of ['DeadLetteredAfter', 'DeadLetteredBefore'] as const) {
    if (f[k] !== undefined && (typeof f[k] !== 'number' || !Number.isFinite(f[k])))
      throw bad(`${k} must be epoch milliseconds.`);
  }
  if (f.DeathReason !== undefined && !isDeathReason(f.DeathReason))
    throw bad(`DeathReason must be one of ${DEATH_REASONS.join(', ')}.`);
  if (f.Equals !== undefined && f.BodyJsonPath === undefined) throw bad('Equals needs BodyJsonPath.');
  if (typeof f.BodyJsonPath === 'string') parsePath(f.BodyJsonPath);
  return f as MoveFilter;
}

/** The filter as a predicate; no filter matches every message. */
export function filterPredicate(f: MoveFilter | undefined): (m: StoredMessage) => boolean {
  if (!f) return () => true;
  const steps = f.BodyJsonPath === undefined ? undefined : parsePath(f.BodyJsonPath);
  const equals = f.Equals === undefined ? undefined : JSON.stringify(f.Equals);
  return (m) => {
    if (f.MessageAttribute) {
      const a = m.attributes?.[f.MessageAttribute.Name];
      if (!a || (a.StringValue ?? a.BinaryValue) !== f.MessageAttribute.Value) return false;
    }
    if (f.BodyContains !== undefined && !m.body.includes(f.BodyContains)) return false;
    if (f.DeadLetterQueueSourceArn !== undefined && m.deadLetterSourceArn !== f.DeadLetterQueueSourceArn) return false;
    if (
      f.DeadLetteredAfter !== undefined &&
      !(m.deadLetteredAt !== undefined && m.deadLetteredAt >= f.DeadLetteredAfter)
    )
      return false;
    if (
      f.DeadLetteredBefore !== undefined &&
      !(m.deadLetteredAt !== undefined && m.deadLetteredAt < f.DeadLetteredBefore)
    )
      return false;
    if (f.DeathReason !== undefined && m.deaths?.[0]?.reason !== f.DeathReason) return false;
    if (steps) {
      const found = lookup(m.body, steps);
      if (!found.present) return false;
      if (equals !== undefined && JSON.stringify(found.value) !== equals) return false;
    }
    return true;
  };
}

/** `$.a.b[0]`, `a.b.0` and `$['a']` all name the same steps. */
function parsePath(path: string): string[] {
  const steps: string[] = [];
  const re = /\.?([A-Za-z0-9_$-]+)|\[(\d+)\]|\['([^']*)'\]/y;
  const rest = path.startsWith('$') ? path.slice(1) : path;
  let pos = 0;
  while (pos < rest.length) {
    re.lastIndex = pos;
    const m = re.exec(rest);
    if (!m) throw bad(`BodyJsonPath ${path} is not a supported path.`);
    steps.push(m[1] ?? m[2] ?? m[3]!);
    pos = re.lastIndex;
  }
  return steps;
}

function lookup(body: string, steps: string[]): { present: boolean; value?: unknown } {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return { present: false };
  }
  for (const s of steps) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, s)) return { present: false };
    v = (v as Record<string, unknown>)[s];
  }
  return { present: true, value: v };
}
