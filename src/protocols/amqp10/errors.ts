import { AmqpError } from '../../engine/kernel/amqp-errors.js';
import { AddressError } from './address.js';
import { DecodeError } from './codec.js';
import { CODE, composite } from './frames.js';
import { v, type Value } from './types.js';

/** An AMQP 1.0 error: a condition symbol and a description. */
export interface ErrorCondition {
  condition: string;
  description: string;
}

/** An error that ends a link (detach), a session (end) or the connection (close). */
export class Amqp10Error extends Error {
  override readonly name = 'Amqp10Error';
  constructor(
    readonly condition: string,
    description: string,
    readonly scope: 'link' | 'session' | 'connection' = 'connection',
  ) {
    super(description);
  }
}

/** RabbitMQ 4's conditions for the broker's (0-9-1 shaped) errors, with RabbitMQ's texts. */
const CONDITIONS: ReadonlyMap<number, string> = new Map([
  [403, 'amqp:unauthorized-access'],
  [404, 'amqp:not-found'],
  [405, 'amqp:resource-locked'],
  [406, 'amqp:precondition-failed'],
  [506, 'amqp:resource-limit-exceeded'],
  [540, 'amqp:not-implemented'],
]);

export function conditionOf(e: unknown): ErrorCondition {
  if (e instanceof Amqp10Error) return { condition: e.condition, description: e.message };
  if (e instanceof AmqpError)
    return { condition: CONDITIONS.get(e.code) ?? 'amqp:internal-error', description: e.message };
  if (e instanceof AddressError) return { condition: 'amqp:invalid-field', description: e.message };
  if (e instanceof DecodeError) return { condition: 'amqp:decode-error', description: e.message };
  return { condition: 'amqp:internal-error', description: 'internal error' };
}

/** The error composite of detach, end, close and the rejected outcome. */
export function errorValue(e: ErrorCondition): Value {
  return composite(CODE.error, [v.symbol(e.condition), v.string(e.description.slice(0, 1024))]);
}
