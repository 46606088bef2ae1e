/**
 * Defence in depth against prototype pollution: `redrive serve` makes the prototypes
 * every plain object, array and function inherits from non-extensible, before it accepts
 * a connection. Decoded client data never becomes a plain object keyed by the client
 * (docs/security.md), so nothing should add a property there; if a path is ever missed,
 * the addition fails instead of giving every object in the process a new inherited
 * property (an allow-all `Policy`, say).
 *
 * Non-extensible, not frozen: freezing `Object.prototype` makes its properties read-only,
 * which takes V8 off its fast path for property stores everywhere (the server's CPU per
 * message rose by about 40%, docs/performance.md); refusing new properties, which is what
 * a pollution adds, costs nothing measurable.
 *
 * Only `redrive serve` closes them: a program that embeds the server (`startRedrive`)
 * owns its process's intrinsics. The libraries the server loads were checked to run with
 * them closed (test/security/start-up-hardening.test.ts, and every end-to-end test, which
 * runs `redrive serve`).
 */
const CLOSED_INTRINSICS = [Object.prototype, Array.prototype, Function.prototype] as const;

export function closeIntrinsics(): void {
  for (const o of CLOSED_INTRINSICS) Object.preventExtensions(o);
}
