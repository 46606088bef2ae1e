import { Writer } from './codec.js';
import { AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import { encodeMethod, type Args, type MethodName } from './spec.js';

export const FRAME_METHOD = 1;
export const FRAME_HEADER = 2;
export const FRAME_BODY = 3;
export const FRAME_HEARTBEAT = 8;
const FRAME_END = 0xce;
/** Type, channel, size before the payload; the end octet after it. */
const FRAME_OVERHEAD = 8;

export const PROTOCOL_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);

export interface Frame {
  type: number;
  channel: number;
  payload: Buffer;
}

/**
 * Cuts a byte stream into frames. Chunks are kept in a list and joined only when a
 * frame spans them, so a large body arriving in many chunks is copied once.
 */
export class FrameParser {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(public frameMax: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!;
  }

  private take(n: number): Buffer {
    const head = this.peek(n);
    const out = head.subarray(0, n);
    if (head.length === n) this.chunks.shift();
    else this.chunks[0] = head.subarray(n);
    this.buffered -= n;
    return out;
  }

  /** The bytes before any frame (the protocol header), once `n` are in. */
  takeRaw(n: number): Buffer | undefined {
    return this.buffered >= n ? this.take(n) : undefined;
  }

  /** The next whole frame, or undefined until more bytes arrive. Throws a frame error. */
  next(): Frame | undefined {
    if (this.buffered < 7) return undefined;
    const head = this.peek(7);
    const type = head[0]!;
    const channel = head.readUInt16BE(1);
    const size = head.readUInt32BE(3);
    if (type !== FRAME_METHOD && type !== FRAME_HEADER && type !== FRAME_BODY && type !== FRAME_HEARTBEAT) {
      throw new AmqpError(
        CODES.FRAME_ERROR,
        `type ${type}, all octets = <<>>: {frame_too_large,${size},${this.frameMax - FRAME_OVERHEAD}}`,
        0,
        0,
        true,
      );
    }
    if (size + FRAME_OVERHEAD > this.frameMax) {
      throw new AmqpError(
        CODES.FRAME_ERROR,
        `type ${type}, all octets = <<>>: {frame_too_large,${size},${this.frameMax - FRAME_OVERHEAD}}`,
        0,
        0,
        true,
      );
    }
    if (this.buffered < size + FRAME_OVERHEAD) return undefined;
    const frame = this.take(size + FRAME_OVERHEAD);
    if (frame[size + 7] !== FRAME_END) {
      throw new AmqpError(
        CODES.FRAME_ERROR,
        `type ${type}, first 16 octets = ${octets(frame.subarray(7, 23))}: frame_end_marker_missing`,
        0,
        0,
        true,
      );
    }
    return { type, channel, payload: frame.subarray(7, size + 7) };
  }
}

const octets = (b: Buffer) => `<<${[...b].join(',')}>>`;

function frame(type: number, channel: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(payload.length + FRAME_OVERHEAD);
  out[0] = type;
  out.writeUInt16BE(channel, 1);
  out.writeUInt32BE(payload.length, 3);
  payload.copy(out, 7);
  out[payload.length + 7] = FRAME_END;
  return out;
}

export function methodFrame(channel: number, name: MethodName, args?: Args): Buffer {
  const w = new Writer(128);
  encodeMethod(w, name, args);
  return frame(FRAME_METHOD, channel, w.result());
}

export const HEARTBEAT = frame(FRAME_HEARTBEAT, 0, Buffer.alloc(0));

/** A content header and the body frames, the body cut to the negotiated frame size. */
export function contentFrames(channel: number, rawProperties: Buffer, body: Buffer, frameMax: number): Buffer[] {
  const w = new Writer(rawProperties.length + 12);
  w.short(60).short(0).longlong(body.length).bytes(rawProperties);
  const out = [frame(FRAME_HEADER, channel, w.result())];
  const max = frameMax - FRAME_OVERHEAD;
  for (let at = 0; at < body.length; at += max) out.push(frame(FRAME_BODY, channel, body.subarray(at, at + max)));
  return out;
}
