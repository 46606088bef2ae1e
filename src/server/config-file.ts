import { readFile } from 'node:fs/promises';
import { parsePolicies, type Policy } from '../engine/policies.js';

/**
 * The server's config file (`redrive serve --config FILE`), JSON:
 *
 *   { "policies": [ { "name": "orders", "pattern": "^orders-", "priority": 0,
 *                     "definition": { "deadLetterTargetName": "orders-dlq", "maxReceiveCount": 5 } } ],
 *     "queues":   [ { "name": "orders-dlq" },
 *                   { "name": "orders-in", "attributes": { "VisibilityTimeout": 60 }, "tags": { "team": "shop" },
 *                     "deadLetterQueue": { "name": "orders-dlq", "maxReceiveCount": 5 } } ],
 *     "storage":  "postgres://redrive@db:5432/redrive" }
 *
 * It is read at start and again on SIGHUP. A file that does not validate is refused with
 * an error naming the offending field: the server does not start, or on reload keeps
 * what is in force.
 */
export interface ConfigFile {
  policies: Policy[];
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

export class ConfigError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function only(o: Record<string, unknown>, path: string, known: string[]): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new ConfigError(`${path}.${k}: unknown field (known: ${known.join(', ')})`);
}

/** A map of strings; numbers and booleans are written as SQS expects them, as strings. */
function stringMap(v: unknown, path: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v)) throw new ConfigError(`${path}: must be an object`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') throw new ConfigError(`${path}.${k}: must be a string, number or boolean`);
    out[k] = String(x);
  }
  return out;
}

function parseQueues(v: unknown): QueueDeclaration[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new ConfigError('queues: must be an array');
  const seen = new Set<string>();
  return v.map((q, i) => {
    const at = `queues[${i}]`;
    if (!isObject(q)) throw new ConfigError(`${at}: must be an object`);
    only(q, at, ['name', 'accountId', 'attributes', 'tags', 'deadLetterQueue']);
    if (typeof q.name !== 'string' || q.name === '') throw new ConfigError(`${at}.name: must be a non-empty string`);
    if (q.accountId !== undefined && (typeof q.accountId !== 'string' || !/^\d{12}$/.test(q.accountId))) {
      throw new ConfigError(`${at}.accountId: must be 12 digits`);
    }
    const key = `${q.accountId ?? ''}/${q.name}`;
    if (seen.has(key)) throw new ConfigError(`${at}.name: "${q.name}" is declared twice`);
    seen.add(key);
    const decl: QueueDeclaration = {
      name: q.name, accountId: q.accountId as string | undefined,
      attributes: stringMap(q.attributes, `${at}.attributes`), tags: stringMap(q.tags, `${at}.tags`),
    };
    if (q.deadLetterQueue !== undefined) {
      const d = q.deadLetterQueue;
      if (!isObject(d)) throw new ConfigError(`${at}.deadLetterQueue: must be an object`);
      only(d, `${at}.deadLetterQueue`, ['name', 'maxReceiveCount']);
      if (typeof d.name !== 'string' || d.name === '') throw new ConfigError(`${at}.deadLetterQueue.name: must be a non-empty string`);
      if (typeof d.maxReceiveCount !== 'number' || !Number.isInteger(d.maxReceiveCount) || d.maxReceiveCount < 1 || d.maxReceiveCount > 1000) {
        throw new ConfigError(`${at}.deadLetterQueue.maxReceiveCount: must be an integer from 1 to 1000`);
      }
      if (decl.attributes.RedrivePolicy !== undefined) throw new ConfigError(`${at}: give deadLetterQueue or attributes.RedrivePolicy, not both`);
      decl.deadLetterQueue = { name: d.name, maxReceiveCount: d.maxReceiveCount };
    }
    return decl;
  });
}

export async function loadConfigFile(path: string): Promise<ConfigFile> {
  try {
    const raw: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (!isObject(raw)) throw new ConfigError('must be a JSON object');
    only(raw, '(file)', ['policies', 'queues', 'storage']);
    if (raw.storage !== undefined && (typeof raw.storage !== 'string' || raw.storage === '')) throw new ConfigError('storage: must be a non-empty string');
    return {
      policies: raw.policies === undefined ? [] : parsePolicies(raw.policies), queues: parseQueues(raw.queues),
      storage: raw.storage as string | undefined,
    };
  } catch (e) {
    throw new ConfigError(`${path}: ${(e as Error).message}`);
  }
}
