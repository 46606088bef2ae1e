import { CODE, composite, compositeOf, field, frame, frameOverhead, FRAME_AMQP } from './frames.js';
import { MAX_MESSAGE_SIZE } from './incoming-link.js';
import { v, type Value } from './types.js';

/**
 * One delivery's transfer frames: the first with its delivery-id, tag and settlement, the
 * others continuing it, each payload cut to fit the peer's max-frame-size.
 */
export function transferFrames(
  channel: number,
  handle: number,
  deliveryId: number,
  settled: boolean,
  payload: Buffer,
  peerMaxFrame: number,
): Buffer[] {
  const tag = Buffer.alloc(4);
  tag.writeUInt32BE(deliveryId);
  const first = (more: boolean) =>
    composite(CODE.transfer, [
      v.uint(handle),
      v.uint(deliveryId),
      v.binary(tag),
      v.uint(0),
      v.bool(settled),
      v.bool(more),
    ]);
  const room = Math.max(64, peerMaxFrame - frameOverhead(first(true)));
  const frames: Buffer[] = [];
  for (let at = 0; ; at += room) {
    const more = at + room < payload.length;
    const performative =
      at === 0
        ? first(more)
        : composite(CODE.transfer, [v.uint(handle), undefined, undefined, undefined, undefined, v.bool(more)]);
    frames.push(frame(FRAME_AMQP, channel, performative, payload.subarray(at, at + room)));
    if (!more) return frames;
  }
}

/**
 * The source echoed in the attach: without its filters, which Redrive does not apply
 * (a peer must not think they are), as RabbitMQ echoes only the filters it applies.
 */
export function withoutFilter(source: Value | undefined): Value | undefined {
  const c = compositeOf(source);
  if (!c || field(c, 7) === undefined) return source;
  const fields: (Value | undefined)[] = [...c.fields];
  fields[7] = undefined;
  return composite(CODE.source, fields);
}

/**
 * The server's attach for a link it accepted: as `sender` (the client receives; its
 * settlement mode as asked, delivery-count from 0) or `receiver` (the client sends; the
 * largest message it may send).
 */
export function attachReply(
  name: string,
  handle: number,
  role: 'sender' | 'receiver',
  o: { settled?: boolean; sndSettleMode?: Value; source?: Value; target?: Value },
): Value {
  const sender = role === 'sender';
  return composite(CODE.attach, [
    v.string(name),
    v.uint(handle),
    v.bool(!sender),
    sender ? v.ubyte(o.settled ? 1 : 0) : (o.sndSettleMode ?? v.ubyte(2)),
    v.ubyte(0),
    o.source,
    o.target,
    undefined,
    undefined,
    sender ? v.uint(0) : undefined,
    sender ? undefined : v.ulong(MAX_MESSAGE_SIZE),
  ]);
}
