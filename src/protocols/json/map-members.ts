import { queryOperation, resolve, type Shape } from '../query/model.js';

/**
 * The JSON protocol's maps (queue attributes, message attributes, tags) are keyed by the
 * client. JSON.parse makes every key an own property, `__proto__` included, but the
 * objects still inherit from Object.prototype, so a lookup by a client's name could find
 * an inherited member. Each map of an action's input is therefore re-created as a
 * null-prototype object, as the Query protocol decodes them (query/decode.ts). The walk
 * follows the model and touches only the members that hold maps, once per request.
 */
type Walk =
  | { kind: 'map' }
  | { kind: 'list'; item: Walk }
  | { kind: 'structure'; members: (readonly [string, Walk])[] };

const MAP: Walk = { kind: 'map' };
/** The model nests a few levels; a deeper shape holds no map worth the walk. */
const MAX_DEPTH = 8;
const walks = new Map<string, Walk | undefined>();

function walkOf(shape: Shape, depth = 0): Walk | undefined {
  if (depth > MAX_DEPTH) return undefined;
  switch (shape.type) {
    case 'map':
      return MAP;
    case 'list': {
      const item = walkOf(resolve(shape.member!), depth + 1);
      return item && { kind: 'list', item };
    }
    case 'structure': {
      const members = Object.entries(shape.members ?? {}).flatMap(([name, ref]) => {
        const w = walkOf(resolve(ref), depth + 1);
        return w ? [[name, w] as const] : [];
      });
      return members.length ? { kind: 'structure', members } : undefined;
    }
    default:
      return undefined;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function apply(value: unknown, walk: Walk): unknown {
  if (walk.kind === 'map') return isRecord(value) ? Object.assign(Object.create(null), value) : value;
  if (walk.kind === 'list') return Array.isArray(value) ? value.map((v) => apply(v, walk.item)) : value;
  if (!isRecord(value)) return value;
  for (const [name, w] of walk.members) if (Object.hasOwn(value, name)) value[name] = apply(value[name], w);
  return value;
}

/** The action's input with each of its maps a null-prototype object (the input is changed in place). */
export function nullPrototypeMaps(action: string, input: Record<string, unknown>): Record<string, unknown> {
  if (!walks.has(action)) {
    const op = queryOperation(action);
    walks.set(action, op?.input && walkOf(op.input));
  }
  const walk = walks.get(action);
  return walk ? (apply(input, walk) as Record<string, unknown>) : input;
}
