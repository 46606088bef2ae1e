import * as z from 'zod';
import { patternError } from './policy-pattern.js';
import { DEAD_LETTER_SETTINGS, valuesList, type SettingValue } from './setting-spellings.js';

/**
 * The schema of dead-letter policies (server-policies.ts), and the helpers that word its errors
 * the way the config file reports them: `<field path>: must be <what>, not <value>`, e.g.
 * `policies[1].definition.maxReceiveCount: must be an integer from 1 to 1000, not 0`.
 * Every schema carries its own message, so no message depends on zod's wording, and
 * config-file.ts builds the rest of the file's schema from the same helpers.
 */

const shown = (v: unknown): string => (typeof v === 'number' ? String(v) : JSON.stringify(v));

/** The message of a value that is not what a field expects, with the value it has. */
export const must =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    `must be ${what}${issue.input === undefined ? ', and is missing' : `, not ${shown(issue.input)}`}`;

export const nonEmptyString = () => {
  const error = must('a non-empty string');
  return z.string({ error }).min(1, { error, abort: true });
};

export const intFrom = (min: number, max: number) => {
  const error = must(`an integer from ${min} to ${max}`);
  return z.int({ error }).min(min, { error }).max(max, { error });
};

/** An object that refuses keys it does not know, naming them and the known ones. */
export const strictObject = <T extends z.ZodRawShape>(shape: T, unknown = 'unknown field') => {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `${unknown} (known: ${known})` : must('an object')(issue)),
  });
};

export const arrayOf = <T extends z.ZodType>(item: T) => z.array(item, { error: must('an array') });

/**
 * One line per problem, `<path>: <message>`, the path written as in the file
 * (`queues[0].attributes.VisibilityTimeout`) after `prefix`. An unknown key is reported at
 * its own path. Zod reports some range errors twice; each line is given once.
 */
export function issueLines(error: z.ZodError, prefix = ''): string[] {
  const pathOf = (keys: readonly PropertyKey[]) =>
    keys.reduce<string>(
      (at, k) => (typeof k === 'number' ? `${at}[${k}]` : at ? `${at}.${String(k)}` : String(k)),
      prefix,
    );
  const line = (keys: readonly PropertyKey[], message: string) => {
    const at = pathOf(keys);
    return at ? `${at}: ${message}` : message;
  };
  const lines = error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((k) => line([...issue.path, k], issue.message))
      : [line(issue.path, issue.message)],
  );
  return [...new Set(lines)];
}

const QUEUE_ARN = /^arn:aws:sqs:[^:]+:[^:]+:[^:]+$/;
const arnError = must('an SQS queue ARN (arn:aws:sqs:<region>:<account>:<name>)');

/** The config file's schema of a setting's value (setting-spellings.ts). */
function valueSchema(value: SettingValue) {
  if (value.type === 'int') return intFrom(value.min, value.max);
  if (value.type === 'string') return z.string({ error: must('a string') });
  return z.enum(value.values as [string, ...string[]], { error: must(valuesList(value.values)) });
}

const spelledSettings = Object.fromEntries(
  DEAD_LETTER_SETTINGS.map((s) => [s.config, valueSchema(s.value).optional()]),
);

const definitionSchema = strictObject(
  {
    deadLetterTargetArn: z.string({ error: arnError }).regex(QUEUE_ARN, { error: arnError }).optional(),
    deadLetterTargetName: nonEmptyString().optional(),
    maxReceiveCount: intFrom(1, 1000).optional(),
    ...spelledSettings,
    // Opt-in: without it a policy whose pattern matches its own dead-letter queue leaves
    // that queue alone, so its TTL and length limits never drop dead-lettered messages.
    applyToDeadLetterTarget: z.boolean({ error: must('true or false') }).optional(),
  },
  'unknown setting',
).superRefine((d, ctx) => {
  if (d.deadLetterTargetArn !== undefined && d.deadLetterTargetName !== undefined) {
    ctx.addIssue({ code: 'custom', message: 'give deadLetterTargetArn or deadLetterTargetName, not both' });
  }
});

const patternSchema = nonEmptyString().superRefine((pattern, ctx) => {
  const error = patternError(pattern);
  if (error) ctx.addIssue({ code: 'custom', message: `not a valid regular expression (${error})` });
});

export const policiesSchema = arrayOf(
  strictObject({
    name: nonEmptyString(),
    pattern: patternSchema,
    priority: intFrom(-1_000_000, 1_000_000).default(0),
    definition: definitionSchema,
  }),
).superRefine((policies, ctx) => {
  const names = new Set<string>();
  policies.forEach(({ name }, i) => {
    if (names.has(name))
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate policy name "${name}"` });
    names.add(name);
  });
});
