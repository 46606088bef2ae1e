/**
 * Helpers of the AMQP 1.0 tests: rhea connections to a Redrive server process, and
 * promises around rhea's events (send and wait for the outcome, receive n messages);
 * Qpid Proton's scenarios (proton_scenario.py) run with Debian's Python.
 */
import { execFile } from 'node:child_process';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import rhea, {
  type Connection,
  type ConnectionOptions,
  type Delivery,
  type EventContext,
  type Message,
  type Receiver,
  type ReceiverOptions,
} from 'rhea';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';

/**
 * A server for the enclosing describe(), started before its tests and stopped after them,
 * with an amqplib channel (to declare queues and read over 0-9-1) and a rhea connection.
 */
export function useAmqp10Server(): () => { redrive: AmqpServer; ch: Channel; c: Connection } {
  let redrive: AmqpServer | undefined;
  let model: ChannelModel | undefined;
  let ch: Channel | undefined;
  let c: Connection | undefined;
  before(async () => {
    redrive = await startAmqpServer();
    model = await amqp.connect(redrive.url);
    ch = await model.createChannel();
    c = await connect(redrive.port);
  });
  after(async () => {
    if (c) await close(c).catch(() => undefined);
    await model?.close().catch(() => undefined);
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });
  return () => ({ redrive: redrive!, ch: ch!, c: c! });
}

/** An open rhea connection (SASL PLAIN as guest unless told otherwise). */
export function connect(port: number, opts: Partial<ConnectionOptions> = {}): Promise<Connection> {
  const container = rhea.create_container({ id: `test-${Math.random().toString(36).slice(2)}` });
  return new Promise((resolve, reject) => {
    const c = container.connect({
      host: '127.0.0.1',
      port,
      username: 'guest',
      password: 'guest',
      reconnect: false,
      ...opts,
    } as ConnectionOptions);
    c.once('connection_open', () => resolve(c));
    c.once('connection_error', (ctx: EventContext) => reject(ctx.connection.error ?? new Error('connection error')));
    c.once('disconnected', (ctx: EventContext) => reject(ctx.error ?? new Error('disconnected')));
  });
}

export function close(c: Connection): Promise<void> {
  return new Promise((resolve) => {
    if (!c.is_open()) return resolve();
    c.once('connection_close', () => resolve());
    c.once('disconnected', () => resolve());
    c.close();
  });
}

/** The outcome of one delivery: accepted, released, rejected (with its error) or modified. */
export interface Outcome {
  outcome: 'accepted' | 'released' | 'rejected' | 'modified';
  error?: { condition: string; description: string };
}

/** Sends each message on one sender to `address` (null: the message's `to`) and waits for every outcome. */
export function send(c: Connection, address: string | null, messages: Message[]): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const outcomes: Outcome[] = [];
    const byId = new Map<number, number>();
    const sender = c.open_sender({ target: { address: address as string } });
    let next = 0;
    const done = () => {
      if (outcomes.filter(Boolean).length === messages.length) {
        sender.close();
        resolve(outcomes);
      }
    };
    const record = (ctx: EventContext, o: Outcome) => {
      outcomes[byId.get(ctx.delivery!.id)!] = o;
      done();
    };
    sender.on('sendable', () => {
      while (next < messages.length && sender.sendable()) {
        const d = sender.send(messages[next]!);
        byId.set(d.id, next++);
      }
    });
    sender.on('accepted', (ctx: EventContext) => record(ctx, { outcome: 'accepted' }));
    sender.on('released', (ctx: EventContext) => record(ctx, { outcome: 'released' }));
    sender.on('modified', (ctx: EventContext) => record(ctx, { outcome: 'modified' }));
    sender.on('rejected', (ctx: EventContext) =>
      record(ctx, { outcome: 'rejected', error: (ctx.delivery!.remote_state as { error?: Outcome['error'] })?.error }),
    );
    sender.on('sender_error', (ctx: EventContext) => reject(ctx.sender!.error));
  });
}

/** An attach error (the detach's), or undefined when the link opened. */
export function attachError(
  c: Connection,
  kind: 'sender' | 'receiver',
  address: string,
): Promise<{ condition: string; description: string } | undefined> {
  return new Promise((resolve) => {
    const link =
      kind === 'sender'
        ? c.open_sender({ target: { address } })
        : c.open_receiver({ source: { address }, credit_window: 0 });
    link.once(`${kind}_open`, () => {
      // A refused attach is answered with an attach, then the detach: wait a moment for it.
      setTimeout(() => resolve(link.error as never), 300);
    });
    link.once(`${kind}_error`, () => resolve(link.error as never));
  });
}

export interface Received {
  message: Message;
  delivery: Delivery;
}

/** A receiver that collects what it gets; `credit_window: 0` and manual acceptance unless told. */
export function receiver(
  c: Connection,
  queue: string,
  opts: Partial<ReceiverOptions> = {},
): { link: Receiver; got: Received[]; next(n: number, ms?: number): Promise<Received[]> } {
  const link = c.open_receiver({
    source: { address: `/queues/${queue}` },
    credit_window: 0,
    autoaccept: false,
    ...opts,
  });
  const got: Received[] = [];
  let waiter: (() => void) | undefined;
  link.on('message', (ctx: EventContext) => {
    got.push({ message: ctx.message!, delivery: ctx.delivery! });
    waiter?.();
  });
  return {
    link,
    got,
    /** Waits until `n` messages have come in total (or `ms` pass), and returns them. */
    next(n: number, ms = 5000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${got.length} of ${n} messages came in ${ms} ms`)), ms);
        const check = () => {
          if (got.length < n) return;
          clearTimeout(t);
          waiter = undefined;
          resolve(got.slice(0, n));
        };
        waiter = check;
        check();
      });
    },
  };
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SCRIPT = fileURLToPath(new URL('../../../test/amqp10/proton_scenario.py', import.meta.url));
const PYTHON = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';

/** A value as Proton decoded it: its AMQP type name and a printable value. */
export type Typed = [string, unknown];

/** A message Proton received (`receive`). */
export interface ProtonReceived {
  body: unknown;
  properties: Record<string, Typed>;
  annotations: Record<string, Typed>;
  durable: boolean;
  delivery_count: number;
}

/** Runs a Proton scenario against the server on `port` (tests that call it need('proton')); its JSON output. */
export async function proton(port: number, ...args: string[]): Promise<unknown> {
  try {
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, `amqp://guest:guest@127.0.0.1:${port}`, ...args], {
      timeout: 30_000,
    });
    return JSON.parse(stdout);
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${err.message}\n${err.stderr}`);
  }
}
