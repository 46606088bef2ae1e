import { errors } from '../kernel/errors.js';
import type { MessageAttributes, StoredMessage } from '../kernel/types.js';
import { AMQP_ATTRIBUTE } from '../kernel/attribute-names.js';
import { envelopeAttributes, envelopeOf, hasEnvelope, type Envelope } from '../routing/envelope.js';

/**
 * An AMQP message as PeekMessages shows it and `redrive messages import` restores it:
 * its exchange, routing keys and content properties as JSON (the headers table with each
 * value's field type), and whether its body is stored as base64. The protocol adapter
 * owns the property format, so the engine is given a codec for it (EngineOptions).
 */
export interface AmqpPropertyCodec {
  /** The properties as typed JSON (property names as amqplib's, headers with field types). */
  toJson(raw: Buffer): Record<string, unknown>;
  /** The raw properties for typed JSON, with what routing reads of them; throws an Error whose message says what is wrong. */
  fromJson(json: unknown): { raw: Buffer; headers?: Record<string, unknown>; expiration?: string; cc?: string[] };
}

/** The system attribute an import sends the view in (docs/extensions.md): it becomes the stored envelope. */
const AMQP_RESTORE_ATTRIBUTE = AMQP_ATTRIBUTE;
/** Longest view accepted: RabbitMQ's default frame_max, so its properties fit a content header frame. */
const MAX_VIEW = 131_072;
const VIEW_FIELDS = ['Exchange', 'RoutingKey', 'RoutingKeys', 'Properties', 'BodyEncoding'];

export interface AmqpView {
  Exchange: string;
  RoutingKey: string;
  /** Its other routing keys (CC, then BCC), when it has any. */
  RoutingKeys?: string[];
  Properties: Record<string, unknown>;
}

/** 'base64' when the message's body is stored (and shown, and exported) base64: it is not UTF-8 text. */
export function bodyEncoding(m: Pick<StoredMessage, 'systemAttributes'>): 'base64' | undefined {
  return hasEnvelope(m) && envelopeOf(m, '').base64Body ? 'base64' : undefined;
}

/** The view of a message published over AMQP (or imported as one); undefined for one sent over SQS. */
export function amqpView(
  m: Pick<StoredMessage, 'systemAttributes'>,
  codec: AmqpPropertyCodec | undefined,
): AmqpView | undefined {
  if (!hasEnvelope(m)) return undefined;
  const env = envelopeOf(m, '');
  const view: AmqpView = { Exchange: env.exchange, RoutingKey: env.routingKey, Properties: {} };
  if (env.moreRoutingKeys?.length) view.RoutingKeys = env.moreRoutingKeys;
  if (env.properties) {
    try {
      view.Properties = codec ? codec.toJson(Buffer.from(env.properties, 'base64')) : { raw: env.properties };
    } catch {
      view.Properties = { raw: env.properties };
    }
  }
  return view;
}

const bad = (reason: string) =>
  errors.invalidParameterValue(`Message system attribute ${AMQP_RESTORE_ATTRIBUTE} is invalid. Reason: ${reason}`);
const isKey = (v: unknown): v is string => typeof v === 'string' && Buffer.byteLength(v) <= 255;

/**
 * A send's AMQP restore attribute (the view, as JSON) turned into the stored envelope;
 * the system attributes are returned unchanged when it has none. `body` is checked to
 * be base64 when the view says it is.
 */
export function restoredEnvelope(
  system: MessageAttributes | undefined,
  body: string,
  queueName: string,
  codec: AmqpPropertyCodec | undefined,
): MessageAttributes | undefined {
  const a = system?.[AMQP_RESTORE_ATTRIBUTE];
  if (!a) return system;
  if (!a.DataType.startsWith('String') || a.StringValue === undefined) throw bad('it must be of type String.');
  if (a.StringValue.length > MAX_VIEW) throw bad(`it is longer than ${MAX_VIEW} characters.`);
  let v: unknown;
  try {
    v = JSON.parse(a.StringValue);
  } catch {
    throw bad('it must be a JSON object.');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad('it must be a JSON object.');
  const view = v as Record<string, unknown>;
  const unknown = Object.keys(view).find((k) => !VIEW_FIELDS.includes(k));
  if (unknown) throw bad(`it has an unknown field ${unknown}.`);
  const env: Envelope = { exchange: '', routingKey: queueName };
  if (view.Exchange !== undefined) {
    if (!isKey(view.Exchange)) throw bad('Exchange must be a string of at most 255 bytes.');
    env.exchange = view.Exchange;
  }
  if (view.RoutingKey !== undefined) {
    if (!isKey(view.RoutingKey)) throw bad('RoutingKey must be a string of at most 255 bytes.');
    env.routingKey = view.RoutingKey;
  }
  if (view.RoutingKeys !== undefined) {
    if (!Array.isArray(view.RoutingKeys) || view.RoutingKeys.length > 100 || !view.RoutingKeys.every(isKey)) {
      throw bad('RoutingKeys must be an array of at most 100 strings of at most 255 bytes.');
    }
    env.moreRoutingKeys = view.RoutingKeys as string[];
  }
  if (view.BodyEncoding !== undefined) {
    if (view.BodyEncoding !== 'base64') throw bad('BodyEncoding must be "base64" (or absent for a text body).');
    if (Buffer.from(body, 'base64').toString('base64') !== body)
      throw bad('BodyEncoding is base64 but the body is not canonical base64.');
    env.base64Body = true;
  }
  if (view.Properties !== undefined) {
    if (!codec) throw bad('this server cannot read AMQP properties.');
    let p: ReturnType<AmqpPropertyCodec['fromJson']>;
    try {
      p = codec.fromJson(view.Properties);
    } catch (e) {
      const err = bad(`Properties: ${(e as Error).message}`);
      err.cause = e;
      throw err;
    }
    if (p.raw.length > 2 || p.raw.some((x) => x !== 0)) env.properties = p.raw.toString('base64');
    env.headers = p.headers;
    env.ccKeys = p.cc;
    env.expiration = p.expiration;
  }
  return envelopeAttributes(system, env);
}
