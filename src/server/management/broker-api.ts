import type { Engine } from '../../engine/engine.js';
import { amqpQueues, listBindings, listExchanges } from '../../engine/amqp/topology.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import type { AmqpConnectionView, AmqpLiveState } from '../../protocols/amqp/live-view.js';
import type { WireResponse } from '../../protocols/wire.js';
import type {
  BrokerError,
  BrokerRequest,
  ChannelInfo,
  ConsumerInfo,
  Overview,
  QueueDetail,
  QueueInfo,
} from '../../wire/broker-api.js';
import { ListError, listBody, MAX_UNPAGED, parseListQuery, pick, selectPage, type ListQuery } from './pagination.js';
import {
  bindingShape,
  channelShape,
  connectionShape,
  consumerShape,
  exchangeShape,
  queueShape,
  receiverShape,
} from './rabbit-shapes.js';
import type { RequestTally } from './request-tally.js';

export interface BrokerSources {
  engine: Engine;
  /** The node id (`--node-id`), RabbitMQ's `node`. */
  node: string;
  /** The AMQP listener's live state; undefined without `--amqp-port` (or before it listens). */
  amqp(): AmqpLiveState | undefined;
  tally: RequestTally;
  log: { info(obj: object, msg?: string): void };
}

const VHOST = '/';

/**
 * The read side of RabbitMQ's management API (connections, channels, consumers, exchanges,
 * bindings, queues, overview) and closing a connection, for the caller's account only;
 * `GET /api/sqs-clients` is Redrive's own (SQS requests by access key). docs/amqp.md.
 */
export class BrokerApi {
  constructor(private readonly s: BrokerSources) {}

  /** The answer, or undefined when the path is not one of these (the caller answers 404). */
  async handle(r: BrokerRequest): Promise<WireResponse | undefined> {
    const [kind, vhost, ...rest] = r.parts;
    if (!ROUTES.has(kind ?? '')) return undefined;
    if (kind === 'connections' && vhost !== undefined) return this.connection(r, vhost, rest);
    if (r.method !== 'GET' && r.method !== 'HEAD') return methodNotAllowed();
    // Listings per virtual host: Redrive has one, `/`.
    if (vhost !== undefined && kind !== 'channels' && vhost !== VHOST) return notFound();
    try {
      const q = parseListQuery(r.query);
      switch (kind) {
        case 'overview':
          return json(200, await this.overview(r.account, q));
        case 'connections':
          return this.list(
            this.live(r.account).map((c) => connectionShape(c, this.s.node)),
            q,
          );
        case 'channels':
          return vhost === undefined
            ? this.list(this.channels(r.account), q)
            : this.one(this.channels(r.account), vhost, q);
        case 'consumers':
          return rest.length ? notFound() : this.list(this.consumers(r.account), q, (x) => x.consumer_tag);
        case 'exchanges':
          return this.exchanges(r.account, rest, q);
        case 'bindings':
          return rest.length
            ? notFound()
            : this.list(
                (await listBindings(this.s.engine, r.account, MAX_UNPAGED)).map(bindingShape),
                q,
                (x) => x.destination,
              );
        case 'queues':
          return await this.queues(r.account, rest, q);
        case 'sqs-clients':
          return this.list(this.s.tally.clients(r.account), q, (x) => x.access_key);
        default:
          return undefined;
      }
    } catch (e) {
      if (e instanceof ListError) return json(400, { error: e.error, reason: e.message });
      throw e;
    }
  }

  private live(account: string): AmqpConnectionView[] {
    return this.s.amqp()?.connections(account) ?? [];
  }

  /** Counts only: the totals of messages would read every queue's depth. */
  private async overview(account: string, q: ListQuery): Promise<Overview | Record<string, unknown>> {
    const live = this.live(account);
    const channels = live.reduce((n, c) => n + c.channels.length, 0);
    const consumers = live.reduce((n, c) => n + c.channels.reduce((m, ch) => m + ch.consumers.length, 0), 0);
    const body: Overview = {
      management_version: 'redrive',
      product_name: 'Redrive',
      cluster_name: this.s.node,
      node: this.s.node,
      object_totals: {
        connections: live.length,
        channels,
        consumers,
        queues: (await amqpQueues(this.s.engine, account)).length,
      },
    };
    return q.columns ? pick(body, q.columns) : body;
  }

  private async connection(r: BrokerRequest, name: string, rest: string[]): Promise<WireResponse> {
    const c = this.live(r.account).find((x) => x.name === name);
    if (rest.length === 1 && rest[0] === 'channels' && r.method === 'GET') {
      return c
        ? this.list(
            c.channels.map((ch) => channelShape(c, ch, this.s.node)),
            parseListQuery(r.query),
          )
        : notFound();
    }
    if (rest.length) return notFound();
    if (r.method === 'GET' || r.method === 'HEAD') return c ? json(200, connectionShape(c, this.s.node)) : notFound();
    if (r.method !== 'DELETE') return methodNotAllowed();
    const header = r.headers['x-reason'];
    const reason = (typeof header === 'string' && header.trim()) || 'Closed via management plugin';
    if (!c || !this.s.amqp()?.closeConnection(r.account, name, reason)) return notFound();
    this.s.log.info(
      { ...r.who, connection: name, user: c.user, account: r.account, reason },
      'AMQP connection closed through the management API',
    );
    return { status: 204, headers: {}, body: '' };
  }

  private channels(account: string): ChannelInfo[] {
    return this.live(account).flatMap((c) => c.channels.map((ch) => channelShape(c, ch, this.s.node)));
  }

  private consumers(account: string): ConsumerInfo[] {
    return this.live(account).flatMap((c) =>
      c.channels.flatMap((ch) => ch.consumers.map((x) => consumerShape(c, ch, x, this.s.node))),
    );
  }

  private async exchanges(account: string, rest: string[], q: ListQuery): Promise<WireResponse> {
    const all = (await listExchanges(this.s.engine, account, MAX_UNPAGED)).map(exchangeShape);
    if (rest.length === 0) return this.list(all, q);
    const x = all.find((e) => e.name === rest[0]);
    if (!x) return notFound();
    if (rest.length === 1) return json(200, q.columns ? pick(x, q.columns) : x);
    if (rest.length === 3 && rest[1] === 'bindings' && (rest[2] === 'source' || rest[2] === 'destination')) {
      const bindings = (await listBindings(this.s.engine, account, MAX_UNPAGED)).filter(
        (b) => (rest[2] === 'source' ? b.source : b.destinationKind === 'exchange' && b.destination) === rest[0],
      );
      return json(200, bindings.map(bindingShape));
    }
    return notFound();
  }

  private async queues(account: string, rest: string[], q: ListQuery): Promise<WireResponse> {
    const all = (await amqpQueues(this.s.engine, account)).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const live = this.live(account);
    if (rest.length === 0) {
      const page = selectPage(all, (x) => x.name, q);
      return json(200, listBody(await this.queueShapes(page.items, live), q, page));
    }
    const queue = all.find((x) => x.name === rest[0]);
    if (!queue) return notFound();
    if (rest.length === 2 && rest[1] === 'bindings') {
      const bindings = (await listBindings(this.s.engine, account, MAX_UNPAGED)).filter(
        (b) => b.destinationKind === 'queue' && b.destination === queue.name,
      );
      return json(200, bindings.map(bindingShape));
    }
    if (rest.length > 1) return notFound();
    const [shape] = await this.queueShapes([queue], live);
    const consumers = live.flatMap((c) =>
      c.channels.flatMap((ch) =>
        ch.consumers.filter((x) => x.queueId === queue.id).map((x) => consumerShape(c, ch, x, this.s.node)),
      ),
    );
    const receivers = this.s.engine.longPolls
      .waiting(queue.id)
      .filter((w) => w.client !== undefined)
      .map(receiverShape);
    const body: QueueDetail = { ...shape!, consumer_details: consumers, long_poll_receivers: receivers };
    return json(200, q.columns ? pick(body, q.columns) : body);
  }

  private async queueShapes(queues: QueueRecord[], live: AmqpConnectionView[]): Promise<QueueInfo[]> {
    const engine = this.s.engine;
    const depths = await engine.store.messages.depths(
      queues.map((x) => x.id),
      engine.clock.now(),
    );
    const consumers = new Map<number, number>();
    for (const c of live)
      for (const ch of c.channels)
        for (const x of ch.consumers) consumers.set(x.queueId, (consumers.get(x.queueId) ?? 0) + 1);
    const out: QueueInfo[] = [];
    for (const queue of queues) {
      const amqp = await engine.store.exchanges.queue(queue.id);
      out.push(
        queueShape({ queue, depth: depths.get(queue.id), amqp, consumers: consumers.get(queue.id) ?? 0 }, this.s.node),
      );
    }
    return out;
  }

  private list<T extends object>(
    items: T[],
    q: ListQuery,
    nameOf = (x: T) => String((x as { name?: unknown }).name),
  ): WireResponse {
    const page = selectPage(items, nameOf, q);
    return json(200, listBody(page.items, q, page));
  }

  private one(items: ChannelInfo[], name: string, q: ListQuery): WireResponse {
    const x = items.find((i) => i.name === name);
    return x ? json(200, q.columns ? pick(x, q.columns) : x) : notFound();
  }
}

const ROUTES = new Set([
  'overview',
  'connections',
  'channels',
  'consumers',
  'exchanges',
  'bindings',
  'queues',
  'sqs-clients',
]);

const json = (status: number, value: unknown): WireResponse => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify(value),
});
const refusal = (status: number, error: BrokerError) => json(status, error);
const notFound = () => refusal(404, { error: 'Object Not Found', reason: 'Not Found' });
const methodNotAllowed = () => refusal(405, { error: 'Method Not Allowed', reason: 'Method Not Allowed' });
