/**
 * Slows down guessing: each client's sign-in attempts are spaced by a delay that doubles
 * with every failure in a row (0, 0.25 s, 0.5 s, 1 s, … up to 8 s), and attempts made in
 * parallel queue behind each other, so parallel guesses gain nothing. A success, or a
 * quarter of an hour without a failure, starts the client afresh.
 */
const BASE_MS = 250;
const MAX_MS = 8_000;
const FORGET_MS = 15 * 60_000;
const MAX_CLIENTS = 10_000;

interface Client {
  failures: number;
  /** The earliest moment the next attempt may be checked. */
  nextAt: number;
  lastSeen: number;
}

export class SignInThrottle {
  private readonly clients = new Map<string, Client>();

  constructor(private readonly sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))) {}

  /** Waits for this client's turn; call `failed` or `succeeded` after checking the attempt. */
  async turn(client: string, now = Date.now()): Promise<void> {
    const c = this.client(client, now);
    const at = Math.max(now, c.nextAt);
    c.nextAt = at + delayAfter(c.failures);
    c.lastSeen = now;
    if (at > now) await this.sleep(at - now);
  }

  failed(client: string, now = Date.now()): void {
    const c = this.client(client, now);
    c.failures++;
    c.nextAt = Math.max(c.nextAt, now + delayAfter(c.failures));
    c.lastSeen = now;
  }

  succeeded(client: string): void {
    this.clients.delete(client);
  }

  private client(key: string, now: number): Client {
    let c = this.clients.get(key);
    if (c && now - c.lastSeen > FORGET_MS) c = undefined;
    if (!c) {
      if (this.clients.size >= MAX_CLIENTS) this.forgetIdle(now);
      c = { failures: 0, nextAt: 0, lastSeen: now };
      this.clients.set(key, c);
    }
    return c;
  }

  private forgetIdle(now: number): void {
    for (const [key, c] of this.clients) if (now - c.lastSeen > FORGET_MS || c.failures === 0) this.clients.delete(key);
  }
}

export function delayAfter(failures: number): number {
  return failures === 0 ? 0 : Math.min(BASE_MS * 2 ** (failures - 1), MAX_MS);
}
