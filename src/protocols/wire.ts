import type { IncomingHttpHeaders } from 'node:http';

/** A request as the protocol adapters see it: no sockets, no streams. */
export interface WireRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** An unexpected failure behind a 500, for the log. */
  error?: unknown;
}
