/**
 * AMQP 1.0's type system as values that keep their wire type, so what a client sends
 * (application properties, annotations) is given back with the same types. Maps are
 * `Map`s keyed by values: decoded client data never becomes a plain object.
 */
export type Value =
  | { type: 'null' }
  | { type: 'bool'; value: boolean }
  | { type: 'ubyte' | 'ushort' | 'uint' | 'byte' | 'short' | 'int' | 'float' | 'double' | 'char'; value: number }
  | { type: 'ulong' | 'long' | 'timestamp'; value: bigint }
  | { type: 'string' | 'symbol'; value: string }
  | { type: 'binary' | 'uuid' | 'decimal32' | 'decimal64' | 'decimal128'; value: Buffer }
  | { type: 'list'; value: Value[] }
  | { type: 'map'; value: Map<Value, Value> }
  /** Every element has the element constructor `code` (and `descriptor`, for described elements). */
  | { type: 'array'; code: number; descriptor?: Value; value: Value[] }
  | { type: 'described'; descriptor: Value; value: Value };

export type MapValue = Extract<Value, { type: 'map' }>;

export const NULL: Value = { type: 'null' };

export const v = {
  bool: (value: boolean): Value => ({ type: 'bool', value }),
  ubyte: (value: number): Value => ({ type: 'ubyte', value }),
  ushort: (value: number): Value => ({ type: 'ushort', value }),
  uint: (value: number): Value => ({ type: 'uint', value }),
  int: (value: number): Value => ({ type: 'int', value }),
  long: (value: bigint | number): Value => ({ type: 'long', value: BigInt(value) }),
  ulong: (value: bigint | number): Value => ({ type: 'ulong', value: BigInt(value) }),
  timestamp: (ms: number): Value => ({ type: 'timestamp', value: BigInt(ms) }),
  string: (value: string): Value => ({ type: 'string', value }),
  symbol: (value: string): Value => ({ type: 'symbol', value }),
  binary: (value: Buffer): Value => ({ type: 'binary', value }),
  list: (value: Value[]): Value => ({ type: 'list', value }),
  map: (entries: Iterable<[Value, Value]> = []): MapValue => ({ type: 'map', value: new Map(entries) }),
  /** A map whose keys are symbols (annotations, the fields of error info). */
  symbolMap: (entries: Iterable<[string, Value]>): MapValue => v.map([...entries].map(([k, x]) => [v.symbol(k), x])),
  /** A map whose keys are strings (application properties, x-opt-deaths entries). */
  stringMap: (entries: Iterable<[string, Value]>): MapValue => v.map([...entries].map(([k, x]) => [v.string(k), x])),
  described: (code: number, value: Value): Value => ({ type: 'described', descriptor: v.ulong(code), value }),
  symbolArray: (names: string[]): Value => ({ type: 'array', code: 0xb3, value: names.map(v.symbol) }),
  stringArray: (names: string[]): Value => ({ type: 'array', code: 0xb1, value: names.map(v.string) }),
};

/** The entry of a map whose key is the string or symbol `key`. */
export function mapGet(m: Value | undefined, key: string): Value | undefined {
  if (m?.type !== 'map') return undefined;
  for (const [k, x] of m.value) if ((k.type === 'symbol' || k.type === 'string') && k.value === key) return x;
  return undefined;
}

/** The entries of a map whose keys are strings or symbols; others are skipped. */
export function textEntries(m: Value | undefined): [string, Value][] {
  if (m?.type !== 'map') return [];
  const out: [string, Value][] = [];
  for (const [k, x] of m.value) if (k.type === 'symbol' || k.type === 'string') out.push([k.value, x]);
  return out;
}

/** The value as text, when it is a string or symbol. */
export function textOf(x: Value | undefined): string | undefined {
  return x?.type === 'string' || x?.type === 'symbol' ? x.value : undefined;
}

/** The value as a number, when it is an integer type that fits. */
export function numberOf(x: Value | undefined): number | undefined {
  if (!x) return undefined;
  switch (x.type) {
    case 'ubyte':
    case 'ushort':
    case 'uint':
    case 'byte':
    case 'short':
    case 'int':
      return x.value;
    case 'ulong':
    case 'long':
    case 'timestamp':
      return x.value <= BigInt(Number.MAX_SAFE_INTEGER) && x.value >= BigInt(Number.MIN_SAFE_INTEGER)
        ? Number(x.value)
        : undefined;
    default:
      return undefined;
  }
}

export function boolOf(x: Value | undefined): boolean | undefined {
  return x?.type === 'bool' ? x.value : undefined;
}
