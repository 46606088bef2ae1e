import { hasAction } from '../../engine/actions/registry.js';
import type { Cancellation } from '../../engine/messages/long-poll.js';
import { errors, SqsError, sqsError } from '../../engine/kernel/errors.js';
import type { RequestContext } from '../../engine/kernel/types.js';
import type { Dispatch } from '../dispatch.js';
import type { WireRequest, WireResponse } from '../wire.js';
import { decodeInput, type Params } from './decode.js';
import { errorJson, errorXml, successJson, successXml } from './encode.js';
import { queryOperation } from './model.js';
import { parseForm } from '../utf8.js';

const CONTENT_TYPE = 'text/xml';
const JSON_TYPE = 'application/json';

/** Whether the client asked for JSON (`Accept: application/json`), which SQS then answers in. */
export function wantsJson(req: Pick<WireRequest, 'headers'>): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*application\/json\s*(;|,|$)/i.test(accept);
}
/** More form fields than the largest valid request (a full SendMessageBatch) can carry. */
const MAX_PARAMS = 2000;
/** Recorded SQS: these are refused when sent to a queue URL rather than the root (sqs-errors.md A4). */
const ROOT_ONLY = new Set(['CreateQueue', 'ListQueues']);
const NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue';

/**
 * The SQS Query protocol: `Action=…` in a form-encoded POST body or a GET query string,
 * sent to the root or to a queue URL, answered in XML. Everything that is not a JSON
 * request comes here, so that a request without an Action gets SQS's answer to that.
 */
export async function handleQuery(
  run: Dispatch,
  ctx: RequestContext,
  req: WireRequest,
  signal?: Cancellation,
): Promise<WireResponse> {
  const json = wantsJson(req);
  try {
    const params = readParams(req);
    const action = params.get('Action');
    if (action === undefined || action === '') return unknownOperation();
    const op = queryOperation(action);
    if (!op || !hasAction(action) || (req.path !== '/' && ROOT_ONLY.has(action))) {
      throw sqsError('InvalidAction', `The action ${action} is not valid for this endpoint.`);
    }
    const input = decodeInput(op.input, params);
    // A request sent to a queue URL is about that queue unless it names another.
    if (op.input?.members?.QueueUrl && input.QueueUrl === undefined && req.path !== '/') {
      input.QueueUrl = ctx.baseUrl + req.path;
    }
    ctx.protocol = 'query';
    const output = await run(ctx, action, input, signal);
    if (json)
      return { status: 200, headers: { 'content-type': JSON_TYPE }, body: successJson(op, output, ctx.requestId) };
    return { status: 200, headers: { 'content-type': CONTENT_TYPE }, body: successXml(op, output, ctx.requestId) };
  } catch (e) {
    return queryError(e, ctx.requestId, json);
  }
}

/** Query-string parameters, then form-body parameters, which win on a repeated name. */
function readParams(req: WireRequest): Params {
  const params: Params = new Map();
  const add = (k: string, v: string) => {
    if (params.size >= MAX_PARAMS) {
      throw sqsError('MalformedQueryString', `The request has more than ${MAX_PARAMS} parameters.`);
    }
    params.set(k, v);
  };
  // node:http hands the request target over byte for byte as latin1.
  parseForm(Buffer.from(req.query, 'latin1'), add);
  parseForm(req.body, add);
  return params;
}

/** What SQS answers a request with no Action: a bare document, 404, even to `Accept: application/json`. */
function unknownOperation(): WireResponse {
  return {
    status: 404,
    headers: { 'content-type': CONTENT_TYPE, 'x-amzn-query-error': 'UnknownOperationException;Sender' },
    body: '<?xml version="1.0"?><UnknownOperationException/>',
  };
}

export function queryError(e: unknown, requestId: string, json = false): WireResponse {
  const err = e instanceof SqsError ? e : errors.internal();
  const fault = err.senderFault ? 'Sender' : 'Receiver';
  // The one message recorded to differ between the protocols (sqs-errors.md A1, A4).
  const message =
    err.code === NON_EXISTENT_QUEUE ? 'The specified queue does not exist for this wsdl version.' : err.message;
  return {
    status: err.status,
    headers: { 'content-type': json ? JSON_TYPE : CONTENT_TYPE, 'x-amzn-query-error': `${err.code};${fault}` },
    body: (json ? errorJson : errorXml)(fault, err.code, message, requestId),
    error: e instanceof SqsError ? undefined : e,
  };
}
