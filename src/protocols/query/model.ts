import botocore from './sqs-query-model.json' with { type: 'json' };
import extensions from './redrive-extensions.json' with { type: 'json' };

/**
 * The Query protocol's wire names come from the botocore model (a verbatim copy of
 * shared/reference/sqs-query-2012-11-05.botocore.json), so every action in it is served
 * without per-action code. Redrive-only actions add their operations and shapes to
 * redrive-extensions.json in the same format.
 */
export interface ShapeRef {
  shape: string;
  locationName?: string;
  flattened?: boolean;
}

export interface Shape {
  type: string;
  members?: Record<string, ShapeRef>;
  member?: ShapeRef;
  key?: ShapeRef;
  value?: ShapeRef;
  flattened?: boolean;
  locationName?: string;
}

export interface QueryOperation {
  name: string;
  input?: Shape;
  output?: Shape;
  resultWrapper?: string;
}

interface ModelFile {
  operations: Record<string, { input?: ShapeRef; output?: ShapeRef & { resultWrapper?: string } }>;
  shapes: Record<string, Shape>;
}

const files = [botocore, extensions] as unknown as ModelFile[];
const shapes: Record<string, Shape> = Object.assign(Object.create(null), ...files.map((f) => f.shapes));
const operations: ModelFile['operations'] = Object.assign(Object.create(null), ...files.map((f) => f.operations));

/**
 * A shape with the traits of the reference that points at it: a member's locationName or
 * flattened wins over the shape's own, as botocore resolves them.
 */
export function resolve(ref: ShapeRef): Shape {
  const { shape, ...traits } = ref;
  const target = shapes[shape];
  if (!target) throw new Error(`query model: unknown shape ${shape}`);
  delete (traits as { documentation?: unknown }).documentation;
  return { ...target, ...traits };
}

export function queryOperation(name: string): QueryOperation | undefined {
  const op = operations[name];
  if (!op) return undefined;
  return {
    name,
    input: op.input && resolve(op.input),
    output: op.output && resolve(op.output),
    resultWrapper: op.output?.resultWrapper,
  };
}
