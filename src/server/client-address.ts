import { BlockList, isIP } from 'node:net';

/**
 * The address a request comes from, for throttling failed authentication and for the
 * budgets each client address has at the door (admission.ts). By default the
 * socket's peer: `X-Forwarded-For` is ignored, since any client can write it. Behind a
 * reverse proxy every request's peer is the proxy, so one attacker would throttle
 * everyone; `--trust-proxy <addresses>` names the proxies (addresses or CIDR ranges,
 * comma-separated), and then the client is the right-most hop of
 * `<X-Forwarded-For>, <peer>` that is not a trusted proxy: the first address that a
 * proxy of ours saw, not what the client claims about itself further left.
 */
export class ClientAddress {
  private readonly trusted?: BlockList;

  constructor(trustProxy: string[] = []) {
    if (trustProxy.length === 0) return;
    this.trusted = new BlockList();
    for (const entry of trustProxy) addTrusted(this.trusted, entry);
  }

  of(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    const socket = peer ?? '';
    if (!this.trusted || forwardedFor === undefined || !this.isTrusted(socket)) return socket;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((h) => bare(h.trim()));
    let client = socket;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      // A hop that is not an address is something a client made up: stop at the last good one.
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!this.isTrusted(hop)) return hop;
    }
    return client;
  }

  /** Whether a peer is one of `--trust-proxy`'s proxies (its connections carry many clients). */
  isProxy(peer: string): boolean {
    return this.trusted !== undefined && this.isTrusted(peer);
  }

  private isTrusted(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return this.trusted!.check(mapped[1]!, 'ipv4') || this.trusted!.check(address, 'ipv6');
    return this.trusted!.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** `--trust-proxy` entries: `10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`; throws on anything else. */
export function parseTrustProxy(value: string): string[] {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error("give the proxies' addresses or CIDR ranges, comma-separated");
  new ClientAddress(entries);
  return entries;
}

function addTrusted(list: BlockList, entry: string): void {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  const max = family === 4 ? 32 : 128;
  if (family === 0 || extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))) {
    throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) list.addAddress(address, type);
  else list.addSubnet(address, Number(bits), type);
}

/** `[::1]:port`, `1.2.3.4:port` and `[::1]` as proxies may write them, reduced to the address. */
function bare(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1]!;
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(hop);
  return v4port ? v4port[1]! : hop;
}
