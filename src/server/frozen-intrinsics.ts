/**
 * Defence in depth against prototype pollution: `redrive serve` freezes the prototypes
 * every plain object, array and function inherits from, before it accepts a connection.
 * Decoded client data never becomes a plain object keyed by the client (docs/security.md),
 * so nothing should write there; if a path is ever missed, the write fails instead of
 * changing what every object in the process inherits (an allow-all `Policy`, say).
 *
 * Only `redrive serve` freezes them: a program that embeds the server (`startRedrive`)
 * owns its process's intrinsics. The libraries the server loads were checked to run with
 * them frozen (test/security/frozen-intrinsics.test.ts runs the server through SQS, AMQP,
 * the console, /metrics and the PostgreSQL store).
 */
const FROZEN_INTRINSICS = [Object.prototype, Array.prototype, Function.prototype] as const;

export function freezeIntrinsics(): void {
  for (const o of FROZEN_INTRINSICS) Object.freeze(o);
}
