import { AmqpError, CODES, amqpErrors } from '../../engine/kernel/amqp-errors.js';
import { Channel, type ChannelHost } from './channel.js';
import { DecodeError } from './codec.js';
import { FRAME_BODY, FRAME_HEADER, FRAME_METHOD, methodFrame, type Frame } from './frames.js';
import { userIdOf } from './properties.js';
import { decodeMethod, type Method } from './spec.js';

/** What a connection's channels need of it beyond what each channel does. */
export interface ChannelsHost extends ChannelHost {
  /** The open channels by number. */
  readonly channels: Map<number, Channel>;
  /** The highest channel number the client may open. */
  readonly channelMax: number;
  /** Who signed in (a channel exists only after sign-in). */
  readonly login?: { user: string };
}

/** A frame on a channel other than 0: a method, or a publish's content header or body. */
export function channelFrame(conn: ChannelsHost, f: Frame): void {
  const ch = conn.channels.get(f.channel);
  if (f.type === FRAME_METHOD) return channelMethod(conn, f.channel, ch, decodeMethod(f.payload));
  if (!ch) throw amqpErrors.channelError(`expected 'channel.open' on channel ${f.channel}`);
  if (ch.closing || ch.closedByPeer) return;
  try {
    if (f.type === FRAME_HEADER) {
      const userId = userIdOf(f.payload);
      if (userId !== undefined && userId !== conn.login?.user) return refuseUserId(ch, userId, conn.login?.user ?? '');
      ch.publisher.header(f.payload);
    } else if (f.type === FRAME_BODY) ch.publisher.body(f.payload);
  } catch (e) {
    if (e instanceof DecodeError) throw amqpErrors.frameError(`cannot decode the content header: ${e.message}`);
    throw e;
  }
}

/**
 * A publish whose `user-id` property names someone other than the connection's user is
 * refused as RabbitMQ refuses it (a consumer may trust that property to say who sent the
 * message); its body frames are then dropped with the closing channel.
 */
function refuseUserId(ch: Channel, claimed: string, actual: string): void {
  ch.publisher.abandon();
  ch.raise(amqpErrors.precondition(`user_id property set to '${claimed}' but authenticated user was '${actual}'`), {
    name: 'basic.publish',
    classId: 60,
    methodId: 40,
    args: {},
  });
}

/** channel.open and channel.close here; the channel's other methods go to it. */
function channelMethod(conn: ChannelsHost, n: number, ch: Channel | undefined, m: Method): void {
  if (!ch) {
    if (m.name !== 'channel.open') throw amqpErrors.channelError(`expected 'channel.open'`);
    if (n > conn.channelMax)
      throw new AmqpError(
        CODES.NOT_ALLOWED,
        `channel ${n} above channel_max ${conn.channelMax}`,
        m.classId,
        m.methodId,
      );
    conn.channels.set(n, new Channel(n, conn));
    conn.write([methodFrame(n, 'channel.open-ok')]);
    return;
  }
  if (ch.closing) {
    if (m.name === 'channel.close') conn.write([methodFrame(n, 'channel.close-ok')]);
    if (m.name === 'channel.close' || m.name === 'channel.close-ok') conn.channels.delete(n);
    return;
  }
  if (ch.closedByPeer) return;
  if (ch.publisher.expectingContent) {
    throw amqpErrors.unexpectedFrame(`expected content header for class 60, got non content header frame instead`);
  }
  switch (m.name) {
    case 'channel.open':
      throw amqpErrors.channelError("second 'channel.open' seen");
    case 'channel.close':
      return ch.closeByPeer(() => {
        if (conn.channels.get(n) === ch) conn.channels.delete(n);
        conn.write([methodFrame(n, 'channel.close-ok')]);
      });
    case 'channel.close-ok':
    case 'channel.flow-ok':
      return;
  }
  if (m.classId === 10)
    throw new AmqpError(CODES.COMMAND_INVALID, `connection method ${m.name} on channel ${n}`, m.classId, m.methodId);
  try {
    ch.handle(m);
  } catch (e) {
    ch.raise(e, m);
  }
}

/** Closes every channel: each stops its consumers and gives its unacknowledged messages back. */
export async function releaseChannels(open: Map<number, Channel>): Promise<void> {
  const channels = [...open.values()];
  open.clear();
  for (const ch of channels) {
    ch.open = false;
    await ch.release();
  }
}
