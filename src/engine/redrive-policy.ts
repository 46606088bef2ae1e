import type { DeadLetterRule } from '../stores/store.js';
import { parseQueueArn } from './addressing.js';
import type { Engine } from './engine.js';
import { errors } from './errors.js';
import type { QueueRecord, RequestContext } from './types.js';

export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

export interface RedriveAllowPolicy {
  redrivePermission: 'allowAll' | 'denyAll' | 'byQueue';
  sourceQueueArns?: string[];
}

const invalid = (name: string, raw: string, reason: string) =>
  errors.invalidParameterValue(`Value ${raw} for parameter ${name} is invalid. Reason: ${reason}`);

export function parseRedrivePolicy(raw: string): RedrivePolicy {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw);
  } catch {
    throw invalid('RedrivePolicy', raw, 'Invalid value for RedrivePolicy.');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid('RedrivePolicy', raw, 'Invalid value for RedrivePolicy.');
  if (v.deadLetterTargetArn === undefined) {
    throw invalid('RedrivePolicy', raw, 'Redrive policy does not contain mandatory attribute: deadLetterTargetArn.');
  }
  if (typeof v.deadLetterTargetArn !== 'string' || !parseQueueArn(v.deadLetterTargetArn)) {
    throw invalid('RedrivePolicy', raw, 'Invalid value for deadLetterTargetArn.');
  }
  if (v.maxReceiveCount === undefined) {
    throw invalid('RedrivePolicy', raw, 'Redrive policy does not contain mandatory attribute: maxReceiveCount.');
  }
  const count = typeof v.maxReceiveCount === 'string' && /^\d+$/.test(v.maxReceiveCount) ? Number(v.maxReceiveCount) : v.maxReceiveCount;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
    throw invalid(
      'RedrivePolicy', raw,
      `Invalid value for maxReceiveCount: ${String(v.maxReceiveCount)}, valid values are from 1 to 1000 both inclusive.`,
    );
  }
  return { deadLetterTargetArn: v.deadLetterTargetArn, maxReceiveCount: count };
}

export function parseRedriveAllowPolicy(raw: string): RedriveAllowPolicy {
  const unsupported = invalid('RedriveAllowPolicy', raw, "Amazon SQS can't create the redrive allow policy, as it's in an unsupported format.");
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw);
  } catch {
    throw unsupported;
  }
  if (!v || typeof v !== 'object') throw unsupported;
  const p = v.redrivePermission;
  const arns = v.sourceQueueArns;
  if (p === 'byQueue') {
    if (!Array.isArray(arns) || arns.length === 0 || arns.some((a) => typeof a !== 'string' || !parseQueueArn(a))) {
      throw unsupported;
    }
    if (arns.length > 10) {
      throw invalid('RedriveAllowPolicy', raw, 'Amazon SQS can\'t create the redrive allow policy. The maximum number of source queue ARNs you can specify is 10.');
    }
    return { redrivePermission: p, sourceQueueArns: arns as string[] };
  }
  if ((p === 'allowAll' || p === 'denyAll') && arns === undefined) return { redrivePermission: p };
  throw unsupported;
}

export function allowsSource(policy: RedriveAllowPolicy | undefined, sourceArn: string): boolean {
  if (!policy || policy.redrivePermission === 'allowAll') return true;
  if (policy.redrivePermission === 'denyAll') return false;
  return policy.sourceQueueArns!.includes(sourceArn);
}

/**
 * Validates RedrivePolicy and RedriveAllowPolicy being set on `queue` (canonicalising
 * them in place): the dead-letter queue must exist, be of the same type, account and
 * region, and its RedriveAllowPolicy must admit this queue.
 */
export async function checkRedriveAttributes(
  engine: Engine,
  ctx: RequestContext,
  queue: Pick<QueueRecord, 'accountId' | 'name' | 'fifo'>,
  attributes: Record<string, string>,
): Promise<void> {
  const allowRaw = attributes.RedriveAllowPolicy;
  if (allowRaw) attributes.RedriveAllowPolicy = JSON.stringify(parseRedriveAllowPolicy(allowRaw));
  const raw = attributes.RedrivePolicy;
  if (!raw) return;
  const policy = parseRedrivePolicy(raw);
  const target = parseQueueArn(policy.deadLetterTargetArn)!;
  if (target.accountId !== queue.accountId || target.region !== engine.region) {
    throw invalid('RedrivePolicy', raw, 'Dead-letter target must be in the same account and region as the source queue.');
  }
  const dlq = await engine.store.getQueue(target.accountId, target.name);
  if (!dlq) throw invalid('RedrivePolicy', raw, 'Dead-letter target does not exist.');
  if (dlq.fifo !== queue.fifo) {
    throw invalid('RedrivePolicy', raw, 'Dead-letter queue must be same type of queue as the source.');
  }
  const sourceArn = engine.arnOf(queue);
  const allow = dlq.attributes.RedriveAllowPolicy ? parseRedriveAllowPolicy(dlq.attributes.RedriveAllowPolicy) : undefined;
  if (!allowsSource(allow, sourceArn)) {
    throw invalid('RedrivePolicy', raw, `Queue ${policy.deadLetterTargetArn} does not allow this queue to use it as a dead-letter queue.`);
  }
  void ctx;
  attributes.RedrivePolicy = JSON.stringify(policy);
}

/** How the receive path dead-letters messages of `queue`, or undefined when it does not. */
export async function deadLetterRule(engine: Engine, queue: QueueRecord): Promise<DeadLetterRule | undefined> {
  const raw = queue.attributes.RedrivePolicy;
  if (!raw) return undefined;
  const policy = parseRedrivePolicy(raw);
  const target = parseQueueArn(policy.deadLetterTargetArn)!;
  const dlq = await engine.store.getQueue(target.accountId, target.name);
  // A deleted dead-letter queue stops dead-lettering; messages stay in the source.
  if (!dlq) return undefined;
  const sourceArn = engine.arnOf(queue);
  return {
    queueId: dlq.id,
    maxReceiveCount: policy.maxReceiveCount,
    patch: (m) => ({
      // Standard queues keep the original enqueue time; FIFO queues reset it and
      // replace the deduplication id with the message id.
      sentAt: queue.fifo ? engine.clock.now() : m.sentAt,
      dedupId: queue.fifo ? m.messageId : m.dedupId,
      deadLetterSourceArn: sourceArn,
    }),
  };
}
