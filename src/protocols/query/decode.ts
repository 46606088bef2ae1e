import { resolve, type Shape } from './model.js';

/** Query parameters by name, e.g. `SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.DataType`. */
export type Params = Map<string, string>;

/**
 * Turns flat Query parameters into the JSON-protocol input the actions take, walking the
 * model the way botocore's query serializer wrote them: members under their locationName,
 * flattened lists as `<member name>.N`, other lists as `<name>.member.N`, maps as
 * `<name>.N.<key>/<value>` (`<name>.entry.N...` when not flattened).
 */
export function decodeInput(shape: Shape | undefined, params: Params): Record<string, unknown> {
  return shape ? ((decodeStructure(shape, params, '') as Record<string, unknown> | undefined) ?? {}) : {};
}

function decode(shape: Shape, params: Params, prefix: string): unknown {
  switch (shape.type) {
    case 'structure':
      return decodeStructure(shape, params, prefix);
    case 'list':
      return decodeList(shape, params, prefix);
    case 'map':
      return decodeMap(shape, params, prefix);
    default: {
      const raw = params.get(prefix);
      return raw === undefined ? undefined : scalar(shape.type, raw);
    }
  }
}

function decodeStructure(shape: Shape, params: Params, prefix: string): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [name, ref] of Object.entries(shape.members ?? {})) {
    const member = resolve(ref);
    const value = decode(member, params, join(prefix, member.locationName ?? name));
    // allow-dynamic-key: the model's member names, never the client's.
    if (value !== undefined) (out ??= {})[name] = value;
  }
  return out;
}

function decodeList(shape: Shape, params: Params, prefix: string): unknown[] | undefined {
  const member = resolve(shape.member!);
  let base: string;
  if (!shape.flattened) base = join(prefix, member.locationName ?? 'member');
  else if (member.locationName) base = join(prefix.slice(0, Math.max(0, prefix.lastIndexOf('.'))), member.locationName);
  else base = prefix;
  const indexes = indexesUnder(params, base);
  // botocore sends an empty list as the bare name with an empty value.
  if (indexes.length === 0) return params.get(prefix) === '' ? [] : undefined;
  return indexes.map((i) => decode(member, params, `${base}.${i}`));
}

function decodeMap(shape: Shape, params: Params, prefix: string): Record<string, unknown> | undefined {
  const keyShape = resolve(shape.key!);
  const valueShape = resolve(shape.value!);
  const base = shape.flattened ? prefix : `${prefix}.entry`;
  let out: Record<string, unknown> | undefined;
  for (const i of indexesUnder(params, base)) {
    const key = params.get(`${base}.${i}.${keyShape.locationName ?? 'key'}`);
    if (key === undefined) continue;
    let value = decode(valueShape, params, `${base}.${i}.${valueShape.locationName ?? 'value'}`);
    if (value === undefined && valueShape.type === 'string') value = '';
    // The keys are the client's: a null-prototype object keeps `__proto__` an ordinary key.
    (out ??= Object.create(null) as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** The distinct N of `<base>.N...` parameters, in numeric order. */
function indexesUnder(params: Params, base: string): string[] {
  const start = `${base}.`;
  const found = new Set<string>();
  for (const name of params.keys()) {
    if (!name.startsWith(start)) continue;
    const end = name.indexOf('.', start.length);
    const index = name.slice(start.length, end < 0 ? undefined : end);
    if (/^\d{1,9}$/.test(index)) found.add(index);
  }
  return [...found].sort((a, b) => Number(a) - Number(b));
}

/** Numbers and booleans by shape type; anything unparsable goes on as text, for the engine's own error. */
function scalar(type: string, raw: string): unknown {
  if ((type === 'integer' || type === 'long') && /^[+-]?\d+$/.test(raw)) return Number(raw);
  if (type === 'boolean' && /^(true|false)$/i.test(raw)) return raw.toLowerCase() === 'true';
  return raw;
}

function join(prefix: string, name: string): string {
  return prefix ? `${prefix}.${name}` : name;
}
