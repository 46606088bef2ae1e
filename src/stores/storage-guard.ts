/**
 * Wraps a store role so that every failure of its asynchronous methods passes through
 * `mapError` (the store's translation of driver errors into the engine's
 * storage-unavailable error). One wrapper per role object, made once at open, so no
 * operation can forget the mapping.
 */
export function guardStorage<T extends object>(role: T, mapError: (e: unknown) => unknown): T {
  const guarded = Object.create(role) as Record<string, unknown>;
  const rethrow = (e: unknown) => {
    throw mapError(e);
  };
  for (const name of methodNames(role)) {
    const method = (role as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    // `arguments` rather than a rest array: V8 passes it on without making an array per call.
    guarded[name] = function guardedCall(): unknown {
      let result: unknown;
      try {
        // biome-ignore lint/complexity/noArguments: the hot path of every store call
        result = method.apply(role, arguments as unknown as unknown[]);
      } catch (e) {
        return Promise.reject(mapError(e));
      }
      return result instanceof Promise ? result.catch(rethrow) : result;
    };
  }
  return guarded as T;
}

function methodNames(o: object): string[] {
  const names = new Set<string>();
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const n of Object.getOwnPropertyNames(p))
      if (n !== 'constructor' && typeof (o as Record<string, unknown>)[n] === 'function') names.add(n);
  }
  return [...names];
}
