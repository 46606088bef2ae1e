/**
 * A raw AMQP client for the malformed-frame tests: it signs in with its own frames, then
 * sends whatever bytes a case holds and reports how the server answered.
 */
import { connect, type Socket } from 'node:net';
import { FrameParser, methodFrame, PROTOCOL_HEADER, type Frame } from '../../src/protocols/amqp/frames.js';
import { Reader, Writer, type FieldTable } from '../../src/protocols/amqp/codec.js';
import { decodeArgs, lookupMethod, type Args, type MethodName } from '../../src/protocols/amqp/spec.js';

export interface Answer {
  /** `connection.close`, `channel.close`, another method's name, or `eof` / `timeout`. */
  kind: string;
  code?: number;
  text?: string;
}

export class RawClient {
  private readonly parser = new FrameParser(1 << 20);
  private frames: Frame[] = [];
  private waiting?: () => void;
  private ended = false;
  /** Heartbeat frames received. */
  heartbeats = 0;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d) => {
      this.parser.push(d);
      for (let f = this.parser.next(); f; f = this.parser.next()) this.frames.push(f);
      this.waiting?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number, host = '127.0.0.1'): Promise<RawClient> {
    const socket = connect(port, host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawClient(socket);
  }

  /** Connects and opens the connection and channel 1 as guest (or as `login`, with `clientProperties`). */
  static async signedIn(
    port: number,
    login = { user: 'guest', password: 'guest' },
    clientProperties: FieldTable = new Map(),
  ): Promise<RawClient> {
    const c = await RawClient.open(port);
    c.write(PROTOCOL_HEADER);
    await c.expect('connection.start');
    c.send(0, 'connection.start-ok', {
      clientProperties,
      mechanism: 'PLAIN',
      response: Buffer.from(`\0${login.user}\0${login.password}`),
      locale: 'en_US',
    });
    const tune = await c.expect('connection.tune');
    c.send(0, 'connection.tune-ok', { channelMax: tune.channelMax, frameMax: tune.frameMax, heartbeat: 0 });
    c.send(0, 'connection.open', { virtualHost: '/' });
    await c.expect('connection.open-ok');
    c.send(1, 'channel.open');
    await c.expect('channel.open-ok');
    return c;
  }

  write(b: Buffer): void {
    this.socket.write(b);
  }

  send(channel: number, name: MethodName, args?: Args): void {
    this.write(methodFrame(channel, name, args));
  }

  private async nextFrame(timeoutMs: number): Promise<Frame | undefined> {
    const until = Date.now() + timeoutMs;
    while (!this.frames.length && !this.ended && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, until - Date.now());
        this.waiting = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.frames.shift();
  }

  /** The next method (content and heartbeat frames skipped), or how the stream ended. */
  async answer(timeoutMs = 2000): Promise<Answer & { args?: Args }> {
    for (;;) {
      const f = await this.nextFrame(timeoutMs);
      if (!f) return { kind: this.ended ? 'eof' : 'timeout' };
      if (f.type === 8) this.heartbeats++;
      if (f.type !== 1) continue;
      const def = lookupMethod(f.payload.readUInt16BE(0), f.payload.readUInt16BE(2));
      if (!def) return { kind: 'unknown method' };
      const args = decodeArgs(def, new Reader(f.payload.subarray(4)));
      if (def.name === 'connection.close' || def.name === 'channel.close') {
        return { kind: def.name, code: Number(args.replyCode), text: String(args.replyText), args };
      }
      return { kind: def.name, args };
    }
  }

  async expect(name: MethodName): Promise<Args> {
    const a = await this.answer();
    if (a.kind !== name) throw new Error(`expected ${name}, got ${a.kind} ${a.code ?? ''} ${a.text ?? ''}`);
    return a.args!;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A frame of `type` on `channel` around `payload`. */
export function rawFrame(type: number, channel: number, payload: Buffer): Buffer {
  const f = Buffer.alloc(payload.length + 8);
  f[0] = type;
  f.writeUInt16BE(channel, 1);
  f.writeUInt32BE(payload.length, 3);
  payload.copy(f, 7);
  f[payload.length + 7] = 0xce;
  return f;
}

/** basic.publish to the default exchange with its content header and body, as raw frames. */
export function publishFrames(channel: number, queue: string, body: string): Buffer {
  const header = new Writer();
  header.short(60).short(0).longlong(Buffer.byteLength(body)).short(0);
  const frame = (type: number, payload: Buffer) => rawFrame(type, channel, payload);
  return Buffer.concat([
    methodFrame(channel, 'basic.publish', { exchange: '', routingKey: queue }),
    frame(2, header.result()),
    frame(3, Buffer.from(body)),
  ]);
}
