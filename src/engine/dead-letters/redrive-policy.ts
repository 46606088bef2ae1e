import { exchangeTargetNames } from './dead-letter-exchange.js';
import { parseQueueArn } from '../kernel/addressing.js';
import type { EngineContext } from '../context/engine-context.js';
import { errors } from '../kernel/errors.js';
import type { QueueRecord, RedriveAllowPolicy, RedrivePolicy, RequestContext } from '../kernel/types.js';

export type { RedriveAllowPolicy, RedrivePolicy } from '../kernel/types.js';

// The wording follows SQS: recorded responses where they exist (an ARN that is not one:
// "Invalid value for deadLetterTargetArn."), real SQS error texts quoted in public bug
// reports otherwise (a missing target, a type mismatch with its doubled period).
const invalid = (name: string, raw: string, reason: string) =>
  errors.invalidParameterValue(`Value ${raw} for parameter ${name} is invalid. Reason: ${reason}`);

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function parseJsonObject(raw: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function parseRedrivePolicy(raw: string): RedrivePolicy {
  const v = parseJsonObject(raw);
  if (!v)
    throw errors.invalidParameterValue(
      'Invalid value for the parameter RedrivePolicy. Reason: Redrive policy is not a valid JSON map.',
    );
  if (v.maxReceiveCount === undefined) {
    throw invalid('RedrivePolicy', raw, 'Redrive policy does not contain mandatory attribute: maxReceiveCount.');
  }
  if (v.deadLetterTargetArn === undefined) {
    throw invalid('RedrivePolicy', raw, 'Redrive policy does not contain mandatory attribute: deadLetterTargetArn.');
  }
  if (Object.keys(v).length > 2) {
    throw invalid(
      'RedrivePolicy',
      raw,
      'Only following attributes are supported: [maxReceiveCount, deadLetterTargetArn].',
    );
  }
  // SQS accepts the count as a number or as a string of digits, and returns a number.
  const count =
    typeof v.maxReceiveCount === 'string' && /^\d+$/.test(v.maxReceiveCount)
      ? Number(v.maxReceiveCount)
      : v.maxReceiveCount;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
    throw invalid(
      'RedrivePolicy',
      raw,
      `Invalid value for maxReceiveCount: ${String(v.maxReceiveCount)}, valid values are from 1 to 1000 both inclusive.`,
    );
  }
  const arn = v.deadLetterTargetArn;
  if (typeof arn !== 'string' || !parseQueueArn(arn)) {
    if (typeof arn === 'string' && /^arn:[^:]+:[^:]+:/.test(arn) && !arn.startsWith('arn:aws:sqs:')) {
      throw invalid('RedrivePolicy', raw, 'Only SQS queues are valid resources for deadLetterTargetArn.');
    }
    throw invalid('RedrivePolicy', raw, 'Invalid value for deadLetterTargetArn.');
  }
  return { deadLetterTargetArn: arn, maxReceiveCount: count };
}

const ALLOW_REASON = "Amazon SQS can't create the redrive allow policy";

function parseRedriveAllowPolicy(raw: string): RedriveAllowPolicy {
  const unsupported = errors.invalidParameterValue(
    `Invalid value for the parameter RedriveAllowPolicy. Reason: ${ALLOW_REASON}, as it’s in an unsupported format.`,
  );
  const v = parseJsonObject(raw);
  if (!v) throw unsupported;
  const p = v.redrivePermission;
  const arns = v.sourceQueueArns;
  if (p !== 'allowAll' && p !== 'denyAll' && p !== 'byQueue') throw unsupported;
  if (Object.keys(v).some((k) => k !== 'redrivePermission' && k !== 'sourceQueueArns')) throw unsupported;
  if (arns !== undefined && (!Array.isArray(arns) || arns.some((a) => typeof a !== 'string'))) throw unsupported;
  if (p !== 'byQueue') {
    if (arns !== undefined) {
      throw invalid(
        'RedriveAllowPolicy',
        raw,
        `${ALLOW_REASON}. To specify one or more source queue ARNs, you must set redrivePermission to byQueue.`,
      );
    }
    return { redrivePermission: p };
  }
  if (!arns || arns.length === 0) {
    throw invalid(
      'RedriveAllowPolicy',
      raw,
      `${ALLOW_REASON}. When you specify the byQueue permission type, you must also specify one or more sourceQueueArns values.`,
    );
  }
  if (arns.length > 10) {
    throw invalid(
      'RedriveAllowPolicy',
      raw,
      `${ALLOW_REASON}. The maximum number of source queue ARNs you can specify is 10.`,
    );
  }
  return { redrivePermission: p, sourceQueueArns: arns as string[] };
}

function allowsSource(policy: RedriveAllowPolicy | undefined, sourceArn: string): boolean {
  if (!policy || policy.redrivePermission === 'allowAll') return true;
  if (policy.redrivePermission === 'denyAll') return false;
  return policy.sourceQueueArns!.includes(sourceArn);
}

/**
 * Validates RedrivePolicy and RedriveAllowPolicy being set on `queue` (canonicalising
 * them in place), in SQS's order: the JSON and its fields, then the target's account,
 * existence and type, then the target's RedriveAllowPolicy. An empty value removes the
 * attribute and is not checked.
 *
 * The allow policy is enforced here only, when a source attaches: a later change to it
 * does not detach sources already pointing at the queue (see docs/dead-letter-queues.md).
 */
export async function checkRedriveAttributes(
  engine: EngineContext,
  ctx: RequestContext,
  queue: Pick<QueueRecord, 'accountId' | 'region' | 'name' | 'fifo'>,
  attributes: Record<string, string>,
): Promise<void> {
  void ctx;
  const allowRaw = attributes.RedriveAllowPolicy;
  if (allowRaw) attributes.RedriveAllowPolicy = JSON.stringify(parseRedriveAllowPolicy(allowRaw));
  const raw = attributes.RedrivePolicy;
  if (!raw) return;
  const policy = parseRedrivePolicy(raw);
  const target = parseQueueArn(policy.deadLetterTargetArn)!;
  if (target.accountId !== queue.accountId) {
    throw invalid('RedrivePolicy', raw, 'Dead-letter target owner should be same as the source.');
  }
  // Another region's queue is not visible from the source's region, as in SQS.
  const dlq = target.region === queue.region ? await engine.store.queues.get(target) : undefined;
  if (!dlq) throw invalid('RedrivePolicy', raw, 'Dead letter target does not exist.');
  if (dlq.fifo !== queue.fifo)
    throw invalid('RedrivePolicy', raw, 'Dead-letter queue must be same type of queue as the source..');
  // A queue may name itself, as SQS allows: dead-letter-queue.ts makes that a single move.
  const sourceArn = engine.arnOf(queue);
  const allowText = dlq.attributes.RedriveAllowPolicy;
  const allow = allowText ? parseRedriveAllowPolicy(allowText) : undefined;
  if (!allowsSource(allow, sourceArn)) {
    throw invalid(
      'RedrivePolicy',
      raw,
      `The RedriveAllowPolicy of ${policy.deadLetterTargetArn} does not allow this queue to use it as a dead-letter queue.`,
    );
  }
  attributes.RedrivePolicy = JSON.stringify(policy);
}

/** The queues that dead-letter into `dlq` (by RedrivePolicy, a policy or a dead-letter exchange), in name order. */
export async function deadLetterSources(
  engine: EngineContext,
  dlq: Pick<QueueRecord, 'accountId' | 'region' | 'name'>,
): Promise<QueueRecord[]> {
  return (await sourcesByTarget(engine, dlq)).get(engine.arnOf(dlq)) ?? [];
}

/**
 * The account's queues (in `owner.region` if given) by the ARN of the dead-letter queue
 * their settings in force name (RedrivePolicy, or a server policy), each list in name
 * order: one pass over the account's queues answers for all of its dead-letter queues
 * (ListQueueSummaries). A source is always in its dead-letter queue's region.
 */
export async function sourcesByTarget(
  engine: EngineContext,
  owner: { accountId: string; region?: string },
): Promise<Map<string, QueueRecord[]>> {
  const byTarget = new Map<string, QueueRecord[]>();
  const mine = (await engine.store.queues.all()).filter(
    (q) => q.accountId === owner.accountId && (owner.region === undefined || q.region === owner.region),
  );
  for (const q of mine) {
    const target = engine.settingsOf(q).targetArn;
    // An AMQP dead-letter exchange replaces the target queue: its queues are the targets.
    const targets =
      engine.settingsOf(q).deadLetterExchange !== undefined
        ? (await exchangeTargetNames(engine, q)).map((name) =>
            engine.arnOf({ accountId: q.accountId, region: q.region, name }),
          )
        : target === undefined
          ? []
          : [target];
    for (const t of targets) {
      const list = byTarget.get(t);
      if (list) list.push(q);
      else byTarget.set(t, [q]);
    }
  }
  // Each target's sources in name order: sorting these few lists, not every queue, keeps an
  // overview of 100,000 queues from sorting them all once more on each refresh.
  for (const list of byTarget.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return byTarget;
}
