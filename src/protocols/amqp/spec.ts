import { AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import { DecodeError, Reader, type Writer, type FieldTable } from './codec.js';
import { methodTable, type Arg } from './method-table.js';

/*
 * Encoding and decoding of the AMQP 0-9-1 methods, generated from the table of
 * method-table.ts, and the methods looked up by name or by class and method ids.
 */

/** A method's name as the spec spells it: `class.method`. */
export type MethodName = keyof typeof methodTable;

export interface MethodDef {
  name: MethodName;
  classId: number;
  methodId: number;
  args: readonly Arg[];
}

const byName = new Map<MethodName, MethodDef>();
const byId = new Map<number, MethodDef>();
for (const [name, [classId, methodId, args]] of Object.entries(methodTable) as [
  MethodName,
  readonly [number, number, readonly Arg[]],
][]) {
  const def = { name, classId, methodId, args };
  byName.set(name, def);
  byId.set(classId * 65536 + methodId, def);
}

const methodDef = (name: MethodName): MethodDef => byName.get(name)!;

export function lookupMethod(classId: number, methodId: number): MethodDef | undefined {
  return byId.get(classId * 65536 + methodId);
}

export type Args = Record<string, unknown>;

export interface Method {
  name: MethodName;
  classId: number;
  methodId: number;
  args: Args;
}

function readArg(r: Reader, type: Arg[1]): unknown {
  switch (type) {
    case 'octet':
      return r.octet();
    case 'short':
      return r.short();
    case 'long':
      return r.long();
    case 'longlong':
    case 'timestamp':
      return r.longlong();
    case 'shortstr':
      return r.shortstr();
    case 'longstr':
      return r.longstrBytes();
    case 'bit':
      return r.bit();
    case 'table':
      return r.table();
  }
}

/** Decodes a method frame's payload after its class and method ids. */
export function decodeArgs(def: MethodDef, r: Reader): Args {
  const out: Args = {};
  // allow-dynamic-key: the argument names of the method table, never the client's.
  for (const [name, type] of def.args) out[name] = readArg(r, type);
  if (!r.done) throw new DecodeError(`${def.name}: ${r.buf.length - r.offset} bytes after the arguments`);
  return out;
}

/** Encodes a method's payload: class id, method id, arguments (missing ones as zeros). */
export function encodeMethod(w: Writer, name: MethodName, args: Args = {}): void {
  const def = methodDef(name);
  w.short(def.classId).short(def.methodId);
  for (const [arg, type] of def.args) {
    const v = args[arg];
    switch (type) {
      case 'octet':
        w.octet(Number(v ?? 0));
        break;
      case 'short':
        w.short(Number(v ?? 0));
        break;
      case 'long':
        w.long(Number(v ?? 0));
        break;
      case 'longlong':
      case 'timestamp':
        w.longlong((v as bigint | number | undefined) ?? 0);
        break;
      case 'shortstr':
        w.shortstr(String(v ?? ''));
        break;
      case 'longstr':
        w.longstr((v as string | Buffer | undefined) ?? '');
        break;
      case 'bit':
        w.bit(Boolean(v));
        break;
      case 'table':
        w.table(v as FieldTable | undefined);
        break;
    }
  }
}

/** A method frame's payload: its method and arguments; an unknown method is 540, bad arguments 501. */
export function decodeMethod(payload: Buffer): Method {
  if (payload.length < 4) throw new AmqpError(CODES.FRAME_ERROR, 'method frame shorter than its class and method ids');
  const classId = payload.readUInt16BE(0);
  const methodId = payload.readUInt16BE(2);
  const def = lookupMethod(classId, methodId);
  if (!def) throw new AmqpError(CODES.NOT_IMPLEMENTED, `unknown method {${classId},${methodId}}`, classId, methodId);
  try {
    return { name: def.name, classId, methodId, args: decodeArgs(def, new Reader(payload.subarray(4))) };
  } catch (e) {
    if (e instanceof DecodeError || e instanceof RangeError) {
      throw new AmqpError(CODES.FRAME_ERROR, `cannot decode ${def.name}: ${e.message}`, classId, methodId);
    }
    throw e;
  }
}
