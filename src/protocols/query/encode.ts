import { resolve, type QueryOperation, type Shape } from './model.js';

const XML_NAMESPACE = 'http://queue.amazonaws.com/doc/2012-11-05/';

/** `<ActionResponse><ActionResult>…</ActionResult><ResponseMetadata>…` as SQS answers a Query request. */
export function successXml(op: QueryOperation, output: Record<string, unknown>, requestId: string): string {
  const content = op.output && op.resultWrapper ? encodeStructure(op.output, output) : '';
  // An empty result is the empty element, as SQS writes it (`<ReceiveMessageResult/>`).
  const result = op.resultWrapper ? (content ? element(op.resultWrapper, content) : `<${op.resultWrapper}/>`) : '';
  return (
    `<?xml version="1.0"?><${op.name}Response xmlns="${XML_NAMESPACE}">${result}` +
    `<ResponseMetadata><RequestId>${escapeXml(requestId)}</RequestId></ResponseMetadata></${op.name}Response>`
  );
}

/**
 * The JSON answer to a Query request sent with `Accept: application/json`, as AWS's
 * Query services give it: the XML document's structure, with the output's members as
 * the JSON protocol names and shapes them. Actions without a result have only metadata.
 */
export function successJson(op: QueryOperation, output: Record<string, unknown>, requestId: string): string {
  const metadata = { ResponseMetadata: { RequestId: requestId } };
  const body = op.resultWrapper ? { [op.resultWrapper]: output, ...metadata } : metadata;
  return JSON.stringify({ [`${op.name}Response`]: body });
}

export function errorJson(fault: 'Sender' | 'Receiver', code: string, message: string, requestId: string): string {
  return JSON.stringify({ Error: { Code: code, Message: message, Type: fault }, RequestId: requestId });
}

export function errorXml(fault: 'Sender' | 'Receiver', code: string, message: string, requestId: string): string {
  return (
    `<?xml version="1.0"?><ErrorResponse xmlns="${XML_NAMESPACE}"><Error><Type>${fault}</Type>` +
    `<Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message><Detail/></Error>` +
    `<RequestId>${escapeXml(requestId)}</RequestId></ErrorResponse>`
  );
}

/** Members in model order; members the model does not know are not sent. */
function encodeStructure(shape: Shape, value: unknown): string {
  if (!value || typeof value !== 'object') return '';
  const record = value as Record<string, unknown>;
  let xml = '';
  for (const [name, ref] of Object.entries(shape.members ?? {})) {
    const v = record[name];
    if (v === undefined || v === null) continue;
    const member = resolve(ref);
    xml += encodeMember(member, member.locationName ?? name, v);
  }
  return xml;
}

function encodeMember(shape: Shape, name: string, value: unknown): string {
  switch (shape.type) {
    case 'structure':
      return element(name, encodeStructure(shape, value));
    case 'list': {
      const item = resolve(shape.member!);
      const items = Array.isArray(value) ? value : [];
      // A flattened list repeats its member element in place of a wrapper (botocore reads it by the member's name).
      if (shape.flattened) return items.map((v) => encodeMember(item, item.locationName ?? name, v)).join('');
      return element(name, items.map((v) => encodeMember(item, item.locationName ?? 'member', v)).join(''));
    }
    case 'map': {
      const keyShape = resolve(shape.key!);
      const valueShape = resolve(shape.value!);
      const entries = Object.entries(value as Record<string, unknown>).map(
        ([k, v]) =>
          encodeMember(keyShape, keyShape.locationName ?? 'key', k) +
          encodeMember(valueShape, valueShape.locationName ?? 'value', v),
      );
      if (shape.flattened) return entries.map((e) => element(name, e)).join('');
      return element(name, entries.map((e) => element('entry', e)).join(''));
    }
    default:
      // Numbers, booleans and base64 blobs are already in their text form once stringified.
      return element(name, escapeXml(String(value)));
  }
}

function element(name: string, content: string): string {
  return `<${name}>${content}</${name}>`;
}

// XML 1.0 cannot carry these at all, not even as character references.
const NOT_XML_CHAR = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\r': '&#xD;' };

/**
 * Text content. A raw CR would be normalised to LF by every XML parser and break the body's
 * MD5, which clients check, so it goes as a character reference, as SQS sends it.
 */
export function escapeXml(s: string): string {
  return s.replace(NOT_XML_CHAR, '\uFFFD').replace(/[&<>"\r]/g, (c) => ENTITIES[c]!);
}
