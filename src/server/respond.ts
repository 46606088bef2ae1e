import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { WireResponse } from '../protocols/wire.js';

/**
 * Writes an answer without ever throwing: a request must not be able to end the process.
 * Headers are checked before anything is written (node:http throws on a value with a
 * control or non-Latin-1 character); a bad one is a bug, answered with a bare 500 and
 * logged. A failure once headers are out can only be ended by closing that one socket.
 */
/**
 * The last value of each header name that passed the checks: most answers carry the same
 * few (the content type), which need not be checked again. Bounded, since values vary.
 */
const passed = new Map<string, string>();
const PASSED_MAX = 256;

export function send(res: ServerResponse, response: WireResponse, requestId: string, log: Logger): void {
  if (res.destroyed) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string | number> = {
    ...response.headers,
    'x-amzn-requestid': requestId,
    'content-length': Buffer.byteLength(response.body),
  };
  let body = response.body;
  try {
    // The request id (a UUID) and the length (a number) are safe: only the answer's own headers are checked.
    for (const name in response.headers) {
      const value = String(response.headers[name]);
      if (passed.get(name) === value) continue;
      validateHeaderName(name);
      validateHeaderValue(name, value);
      if (passed.size >= PASSED_MAX) passed.clear();
      passed.set(name, value);
    }
  } catch (err) {
    log.error(
      { err, requestId, status: response.status },
      'response header refused by node:http; answered 500 instead',
    );
    body = '';
    for (const name of Object.keys(headers)) delete headers[name];
    Object.assign(headers, { 'x-amzn-requestid': requestId, 'content-length': 0, connection: 'close' });
    response = { ...response, status: 500 };
  }
  try {
    res.writeHead(response.status, headers);
    res.end(body);
  } catch (err) {
    log.error({ err, requestId }, 'could not write the response; closing its connection');
    res.destroy();
  }
}
