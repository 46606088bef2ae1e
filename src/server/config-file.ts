import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import * as z from 'zod';
import type { ServerPolicy } from '../engine/policies/server-policies.js';
import {
  arrayOf,
  intFrom,
  issueLines,
  must,
  nonEmptyString,
  policiesSchema,
  strictObject,
} from '../engine/policies/server-policy-schema.js';

/**
 * The server's config file (`redrive serve --config FILE`): YAML when its name ends in
 * `.yaml` or `.yml`, JSON otherwise.
 *
 *   { "policies": [ { "name": "orders", "pattern": "^orders-", "priority": 0,
 *                     "definition": { "deadLetterTargetName": "orders-dlq", "maxReceiveCount": 5 } } ],
 *     "queues":   [ { "name": "orders-dlq" },
 *                   { "name": "orders-in", "attributes": { "VisibilityTimeout": 60 }, "tags": { "team": "shop" },
 *                     "deadLetterQueue": { "name": "orders-dlq", "maxReceiveCount": 5 } } ],
 *     "storage":  "postgres://redrive@db:5432/redrive" }
 *
 * It is read at start and again on SIGHUP. A file that does not validate is refused with
 * an error naming the file and each offending field (or the line of a syntax error): the
 * server does not start, or on reload keeps what is in force.
 */
export interface ConfigFile {
  policies: ServerPolicy[];
  queues: QueueDeclaration[];
  /** The storage, as --storage takes it; the flag wins when given. */
  storage?: string;
}

/** A queue to create at start-up (declare-queues.ts). */
export interface QueueDeclaration {
  name: string;
  /** The account to create it in; the server's --account-id by default. */
  accountId?: string;
  attributes: Record<string, string>;
  tags: Record<string, string>;
  deadLetterQueue?: { name: string; maxReceiveCount: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const accountIdError = must('a string of 12 digits');
const scalarError = must('a string, number or boolean');
/**
 * A map of strings; numbers and booleans are written as SQS expects them, as strings. Its
 * keys are the file's, so it is a null-prototype object: a tag named `toString` or
 * `constructor` is a tag, never a change to what a plain object (zod's record's) inherits.
 */
const stringMap = () =>
  z
    .custom<object>((v) => !!v && typeof v === 'object' && !Array.isArray(v), { error: must('an object') })
    .transform((o, ctx) => {
      const out: Record<string, string> = Object.create(null);
      for (const [k, v] of Object.entries(o)) {
        const ok = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
        if (ok) out[k] = String(v);
        else ctx.issues.push({ code: 'custom', path: [k], message: scalarError({ input: v }), input: v });
      }
      return out;
    })
    .default(() => Object.create(null));

const queueSchema = strictObject({
  name: nonEmptyString(),
  accountId: z
    .string({ error: accountIdError })
    .regex(/^\d{12}$/, { error: accountIdError })
    .optional(),
  attributes: stringMap(),
  tags: stringMap(),
  deadLetterQueue: strictObject({ name: nonEmptyString(), maxReceiveCount: intFrom(1, 1000) }).optional(),
}).superRefine((q, ctx) => {
  if (q.deadLetterQueue && q.attributes?.RedrivePolicy !== undefined) {
    ctx.addIssue({ code: 'custom', message: 'give deadLetterQueue or attributes.RedrivePolicy, not both' });
  }
});

const fileSchema = strictObject({
  policies: policiesSchema.default(() => []),
  queues: arrayOf(queueSchema)
    .superRefine((queues, ctx) => {
      const seen = new Set<string>();
      queues.forEach(({ name, accountId }, i) => {
        const key = `${accountId ?? ''}/${name}`;
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${name}" is declared twice` });
        seen.add(key);
      });
    })
    .default(() => []),
  storage: nonEmptyString().optional(),
});

/** The line and column of a character, counted from 1. */
function lineColumn(text: string, offset: number): string {
  const lines = text.slice(0, offset).split('\n');
  return `line ${lines.length}, column ${lines.at(-1)!.length + 1}`;
}

/**
 * Node 20's JSON.parse gives a position for some syntax errors, not all. Node 22 and later
 * also append their own "(line 3 column 20)", dropped here so that the message says the
 * line and column once, in the same words on every Node.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message.replace(/ \(line \d+ column \d+\)$/, '');
    const at = /at position (\d+)/.exec(message);
    throw new ConfigError(`invalid JSON${at ? ` at ${lineColumn(text, Number(at[1]))}` : ''}: ${message}`, {
      cause: e,
    });
  }
}

/**
 * YAML 1.2 (the core schema: `yes` is a string, `0123` a number). A warning, such as an
 * unknown tag, is refused too: the file would not mean what it says.
 */
function parseYaml(text: string): unknown {
  // Plain messages: pretty ones add an excerpt of the file over several lines.
  const doc = parseDocument(text, { prettyErrors: false });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new ConfigError(`invalid YAML at ${lineColumn(text, problem.pos[0])}: ${problem.message}`);
  try {
    return doc.toJS();
  } catch (e) {
    throw new ConfigError(`invalid YAML: ${(e as Error).message}`, { cause: e }); // an unresolved alias, or too many
  }
}

async function readConfig(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  return /\.ya?ml$/i.test(path) ? parseYaml(text) : parseJson(text);
}

/** Reads and validates the file; every error names the file, and the field or the line. */
export async function loadConfigFile(path: string): Promise<ConfigFile> {
  const raw = await readConfig(path).catch((e: NodeJS.ErrnoException) => {
    throw new ConfigError(
      e.code
        ? `--config ${path}: cannot read it (${e.code}): give the path of a readable config file`
        : `${path}: ${e.message}`,
      { cause: e },
    );
  });
  return parseConfig(raw, path);
}

/**
 * Validates a config already read (the file's content, or the `config` option of the
 * library's startRedrive); every error starts with `source`.
 */
export function parseConfig(raw: unknown, source: string): ConfigFile {
  const result = fileSchema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(
      issueLines(result.error)
        .map((line) => `${source}: ${line}`)
        .join('\n'),
    );
  return result.data;
}
