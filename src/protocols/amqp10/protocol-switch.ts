import type { Socket } from 'node:net';
import type { AmqpUsage } from '../amqp/limits.js';

/** AMQP 1.0's protocol headers: SASL first (RabbitMQ 4 requires it), then AMQP. */
export const SASL_HEADER = Buffer.from('AMQP\x03\x01\x00\x00', 'latin1');
export const AMQP_HEADER = Buffer.from('AMQP\x00\x01\x00\x00', 'latin1');

/** Whether `bytes` (a prefix of the first 8) may still be an AMQP 1.0 header. */
function mayBeAmqp10(bytes: Buffer): boolean {
  return [SASL_HEADER, AMQP_HEADER].some((h) => h.subarray(0, Math.min(8, bytes.length)).equals(bytes.subarray(0, 8)));
}

/**
 * Reads a new socket's first bytes to choose the protocol, as RabbitMQ 4 does on its one
 * port: an AMQP 1.0 header (`AMQP 3 1 0 0` or `AMQP 0 1 0 0`) goes to the 1.0 adapter,
 * anything else to 0-9-1, with the bytes read put back. The socket counts as one in its
 * handshake meanwhile (in all and for its address), and is dropped if the header does not come in time.
 */
export function byProtocolHeader(socket: Socket, usage: AmqpUsage, choose: (amqp10: boolean) => void): void {
  const endHandshake = usage.startHandshake(socket.remoteAddress);
  let got = Buffer.alloc(0);
  let waiting = true;
  const stop = () => {
    if (!waiting) return;
    waiting = false;
    clearTimeout(timer);
    endHandshake();
    socket.off('data', onData);
    socket.off('close', stop);
  };
  const timer = setTimeout(() => {
    stop();
    socket.destroy();
  }, usage.limits.handshakeTimeoutMs);
  const onData = (chunk: Buffer) => {
    got = Buffer.concat([got, chunk]);
    if (got.length < 8 && mayBeAmqp10(got)) return;
    stop();
    socket.pause();
    socket.unshift(got);
    choose(got.length >= 8 && mayBeAmqp10(got));
    socket.resume();
  };
  socket.on('data', onData);
  socket.on('close', stop);
  socket.on('error', () => socket.destroy());
}
