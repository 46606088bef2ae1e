import type { SqsClientInfo } from '../../wire/broker-api.js';

/**
 * SQS requests per access key over the last minute, for the console's Connections page and
 * `GET /api/sqs-clients`. Counting costs one map lookup and an array write per request. At
 * most `MAX_TRACKED_KEYS` keys are kept: a new key past the cap replaces the one seen
 * longest ago, so a client making up key ids (open mode accepts any) cannot grow it.
 */
export const MAX_TRACKED_KEYS = 1_000;
/** The window the rate is taken over: 60 one-second buckets. */
const SECONDS = 60;

interface KeyTally {
  accountId: string;
  accessKey: string;
  client: string;
  firstSeen: number;
  lastSeen: number;
  total: number;
  /** Requests in each second of the window; `second` is the last second written. */
  buckets: Uint32Array;
  second: number;
}

export class RequestTally {
  /** In order of last use (a Map keeps insertion order; a hit moves the key to the end). */
  private readonly keys = new Map<string, KeyTally>();
  /** The entry counted last, the map's most recent. */
  private last?: KeyTally;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly cap = MAX_TRACKED_KEYS,
  ) {}

  /** `times` requests by this key from this client (an HTTP thread sends a client's run of requests as one). */
  count(accountId: string, accessKey: string | undefined, client: string, times = 1): void {
    const key = accessKey?.slice(0, 128) ?? '(unsigned)';
    const now = this.now();
    const second = Math.floor(now / 1000);
    // The common case, the same key as the request before: it is already the most recent
    // entry, so the map need not be touched.
    let t = this.last;
    if (t === undefined || t.accessKey !== key || t.accountId !== accountId) {
      const id = `${accountId}\u0000${key}`;
      t = this.keys.get(id);
      if (t) this.keys.delete(id);
      else {
        if (this.keys.size >= this.cap) this.keys.delete(this.keys.keys().next().value!);
        const buckets = new Uint32Array(SECONDS);
        t = { accountId, accessKey: key, client, firstSeen: now, lastSeen: now, total: 0, buckets, second };
      }
      this.keys.set(id, t);
      this.last = t;
    }
    advance(t, second);
    t.buckets[second % SECONDS]! += times;
    t.total += times;
    t.lastSeen = now;
    t.client = client;
  }

  /** The account's keys, most recently seen first. */
  clients(accountId: string): SqsClientInfo[] {
    const second = Math.floor(this.now() / 1000);
    const out: SqsClientInfo[] = [];
    for (const t of [...this.keys.values()].reverse()) {
      if (t.accountId !== accountId) continue;
      advance(t, second);
      const lastMinute = t.buckets.reduce((a, b) => a + b, 0);
      out.push({
        access_key: t.accessKey,
        peer_host: t.client,
        first_seen: t.firstSeen,
        last_seen: t.lastSeen,
        requests: t.total,
        requests_last_minute: lastMinute,
        rate: Math.round((lastMinute / SECONDS) * 100) / 100,
      });
    }
    return out;
  }

  get size(): number {
    return this.keys.size;
  }
}

/** Clears the buckets of the seconds that passed since the tally was last written. */
function advance(t: KeyTally, second: number): void {
  const gap = Math.min(second - t.second, SECONDS);
  for (let i = 1; i <= gap; i++) t.buckets[(t.second + i) % SECONDS] = 0;
  if (second > t.second) t.second = second;
}
