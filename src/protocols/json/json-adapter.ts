import { hasAction } from '../../engine/actions/registry.js';
import type { Cancellation } from '../../engine/messages/long-poll.js';
import { SqsError, sqsError } from '../../engine/kernel/errors.js';
import type { RequestContext } from '../../engine/kernel/types.js';
import type { Dispatch } from '../dispatch.js';
import type { WireRequest, WireResponse } from '../wire.js';
import { decodeUtf8 } from '../utf8.js';
import { nullPrototypeMaps } from './map-members.js';

const CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'AmazonSQS.';

/** The AWS JSON 1.0 protocol: `X-Amz-Target: AmazonSQS.<Action>` and a JSON body. */
export function isJsonRequest(req: WireRequest): boolean {
  return typeof req.headers['x-amz-target'] === 'string';
}

/** Never rejects: every failure is answered as the protocol words it. (Reactions, not an async frame: the hot path.) */
export function handleJson(
  run: Dispatch,
  ctx: RequestContext,
  req: WireRequest,
  signal?: Cancellation,
): Promise<WireResponse> {
  try {
    const target = String(req.headers['x-amz-target']);
    const action = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
    if (!hasAction(action)) {
      throw sqsError('UnknownOperationException', `The action or operation ${action || target} is not valid.`);
    }
    const input = nullPrototypeMaps(action, parseBody(req.body));
    ctx.protocol ??= 'json';
    return run(ctx, action, input, signal).then(jsonOutput, jsonError);
  } catch (e) {
    return Promise.resolve(jsonError(e));
  }
}

function jsonOutput(output: Record<string, unknown>): WireResponse {
  try {
    return { status: 200, headers: { 'content-type': CONTENT_TYPE }, body: JSON.stringify(output) };
  } catch (e) {
    return jsonError(e);
  }
}

function parseBody(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeUtf8(body));
  } catch {
    throw sqsError('SerializationException', 'Start of structure or map found where not expected.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw sqsError('SerializationException', 'Start of structure or map found where not expected.');
  }
  return parsed as Record<string, unknown>;
}

export function jsonError(e: unknown): WireResponse {
  const err =
    e instanceof SqsError ? e : sqsError('InternalFailure', 'We encountered an internal error. Please try again.');
  return {
    status: err.status,
    headers: {
      'content-type': CONTENT_TYPE,
      'x-amzn-query-error': `${err.code};${err.senderFault ? 'Sender' : 'Receiver'}`,
    },
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${err.type}`, message: err.message }),
    error: e instanceof SqsError ? undefined : e,
  };
}
