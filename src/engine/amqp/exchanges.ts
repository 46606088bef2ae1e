import type { AmqpEngine } from './amqp-engine.js';
import { canonicalJson, type BindingRecord, type ExchangeRecord } from '../store/exchanges.js';
import { amqpErrors, AmqpError, CODES } from '../kernel/amqp-errors.js';
import { EXCHANGE_TYPES, type RoutingSource } from '../routing/routing.js';

/** Words of a topic exchange's binding key (pattern): topic matching costs up to key words × pattern words. */
const TOPIC_PATTERN_WORDS = 32;

const sameBinding = (a: Omit<BindingRecord, 'accountId'>, b: Omit<BindingRecord, 'accountId'>) =>
  a.source === b.source &&
  a.destinationKind === b.destinationKind &&
  a.destination === b.destination &&
  a.routingKey === b.routingKey;

/** The exchanges every virtual host has: they cannot be declared with other settings, nor deleted. */
export const BUILT_IN: Record<string, string> = {
  'amq.direct': 'direct',
  'amq.fanout': 'fanout',
  'amq.topic': 'topic',
  'amq.headers': 'headers',
  'amq.match': 'headers',
};

export interface ExchangeDeclaration {
  name: string;
  type: string;
  passive: boolean;
  durable: boolean;
  autoDelete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

/** Exchanges and exchange-to-exchange bindings of one account (an AMQP virtual host). */
export class AmqpExchanges implements RoutingSource {
  constructor(
    private readonly engine: AmqpEngine,
    private readonly accountId: string,
  ) {}

  async exchange(name: string): Promise<ExchangeRecord | undefined> {
    const builtIn = BUILT_IN[name];
    if (builtIn)
      return {
        accountId: this.accountId,
        name,
        type: builtIn,
        durable: true,
        autoDelete: false,
        internal: false,
        arguments: {},
      };
    if (name === '')
      return {
        accountId: this.accountId,
        name,
        type: 'direct',
        durable: true,
        autoDelete: false,
        internal: false,
        arguments: {},
      };
    return this.engine.store.exchanges.get(this.accountId, name);
  }

  bindings(source: string): Promise<BindingRecord[]> {
    return this.engine.store.exchanges.bindings(this.accountId, source);
  }

  /** The exchange, or 404 as RabbitMQ answers. */
  async existing(name: string): Promise<ExchangeRecord> {
    const x = await this.exchange(name);
    if (!x) throw amqpErrors.noExchange(name);
    return x;
  }

  async declare(d: ExchangeDeclaration): Promise<void> {
    if (d.name === '') throw amqpErrors.accessRefused('operation not permitted on the default exchange');
    if (d.passive) {
      await this.existing(d.name);
      return;
    }
    if (!(EXCHANGE_TYPES as readonly string[]).includes(d.type)) {
      throw new AmqpError(CODES.COMMAND_INVALID, `unknown exchange type '${d.type}'`);
    }
    const existing = await this.exchange(d.name);
    if (!existing && d.name.startsWith('amq.')) {
      throw amqpErrors.accessRefused(`exchange name '${d.name}' contains reserved prefix 'amq.*'`);
    }
    const record: ExchangeRecord = {
      accountId: this.accountId,
      name: d.name,
      type: d.type,
      durable: d.durable,
      autoDelete: d.autoDelete,
      internal: d.internal,
      arguments: d.arguments,
    };
    const stored = existing ?? (await this.engine.store.exchanges.declare(record)).exchange;
    for (const [k, label] of [
      ['type', 'type'],
      ['durable', 'durable'],
      ['autoDelete', 'auto_delete'],
      ['internal', 'internal'],
    ] as const) {
      if (stored[k] !== record[k]) {
        throw amqpErrors.precondition(
          `inequivalent arg '${label}' for exchange '${d.name}' in vhost '/': received '${String(record[k])}' but current is '${String(stored[k])}'`,
        );
      }
    }
  }

  async delete(name: string, ifUnused: boolean): Promise<void> {
    if (name === '' || BUILT_IN[name])
      throw amqpErrors.accessRefused(
        `operation not permitted on the ${name === '' ? 'default' : `built-in '${name}'`} exchange`,
      );
    // RabbitMQ 3.10 answers delete-ok for an exchange that does not exist.
    if (ifUnused && (await this.bindings(name)).length > 0)
      throw amqpErrors.precondition(`exchange '${name}' in vhost '/' in use`);
    const upstream = await this.sourcesOf('exchange', name);
    await this.engine.store.exchanges.delete(this.accountId, name);
    this.engine.bindingQuota.forget(this.accountId);
    await this.autoDelete(upstream);
  }

  /** The exchanges bound to a queue or exchange (their bindings go with it). */
  sourcesOf(kind: BindingRecord['destinationKind'], name: string): Promise<string[]> {
    return this.engine.store.exchanges.sourcesOf(this.accountId, kind, name);
  }

  /**
   * As in RabbitMQ, an auto-delete exchange is deleted when its last binding (as a source)
   * goes: `sources` each just lost one. Deleting it removes its own bindings to other
   * exchanges, which may go in turn.
   */
  async autoDelete(sources: Iterable<string>): Promise<void> {
    for (const name of new Set(sources)) {
      if (name === '' || BUILT_IN[name]) continue;
      const x = await this.engine.store.exchanges.get(this.accountId, name);
      if (!x?.autoDelete || (await this.bindings(name)).length > 0) continue;
      const upstream = await this.sourcesOf('exchange', name);
      await this.engine.store.exchanges.delete(this.accountId, name);
      this.engine.bindingQuota.forget(this.accountId);
      await this.autoDelete(upstream);
    }
  }

  /** Checks a binding's source: it exists and is not the default exchange. */
  async source(name: string): Promise<void> {
    if (name === '') throw amqpErrors.accessRefused('operation not permitted on the default exchange');
    await this.existing(name);
  }

  async bind(b: Omit<BindingRecord, 'accountId'>, bind: boolean): Promise<void> {
    const record = { ...b, accountId: this.accountId };
    const quota = this.engine.bindingQuota;
    if (!bind) {
      if (await this.engine.store.exchanges.unbind(record)) {
        quota.give(this.accountId);
        await this.autoDelete([b.source]);
      }
      return;
    }
    const existing = await this.bindings(b.source);
    const same = canonicalJson(b.arguments);
    if (existing.some((x) => sameBinding(x, b) && canonicalJson(x.arguments) === same)) return;
    const source = await this.exchange(b.source);
    const words = b.routingKey.split('.').length;
    if (source?.type === 'topic' && words > TOPIC_PATTERN_WORDS)
      throw amqpErrors.precondition(`topic binding key of ${words} words; at most ${TOPIC_PATTERN_WORDS}`);
    const perExchange = this.engine.bindingLimits.perExchange;
    if (existing.length >= perExchange)
      throw amqpErrors.precondition(`binding limit of exchange '${b.source}' in vhost '/' (${perExchange}) is reached`);
    if (!(await quota.take(this.accountId)))
      throw amqpErrors.precondition(`binding limit in vhost '/' (${quota.max}) is reached`);
    if (!(await this.engine.store.exchanges.bind(record))) quota.give(this.accountId);
  }
}
