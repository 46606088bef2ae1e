import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WireResponse } from '../protocols/wire.js';

/**
 * The console's static files. The browser scripts are TypeScript in src/console/browser,
 * compiled by the ordinary `tsc` build next to this file; the stylesheet and icon are
 * plain files in src/console/static, read from the package as it ships. Nothing is built
 * at start-up and nothing comes from the network.
 */
const SCRIPTS = fileURLToPath(new URL('./browser/', import.meta.url));
/**
 * The CLI's formatting modules the pages import (`../../cli/<name>.js` from a page's
 * script is `/console/cli/<name>.js`), so the console words a filter as the CLI does.
 * Only these: they load in a browser (no Node module at their top level).
 */
const CLI = fileURLToPath(new URL('../cli/', import.meta.url));
const CLI_MODULES = new Set(['dlq-format', 'amqp-format']);
const STATIC = fileURLToPath(new URL('../../../src/console/static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const cache = new Map<string, WireResponse>();

/** `/console/assets/js/<name>.js`, `/console/assets/<name>.css|svg`, `/console/cli/<CLI_MODULES>.js`; anything else is not found. */
export async function serveAsset(path: string): Promise<WireResponse | undefined> {
  const hit = cache.get(path);
  if (hit) return hit;
  const cli = /^\/console\/cli\/([a-z0-9-]+)\.js$/.exec(path);
  const m = cli ? [path, 'cli', cli[1], '.js'] : /^\/console\/assets\/(?:(js)\/)?([a-z0-9-]+)(\.js|\.css|\.svg)$/.exec(path);
  if (!m || (m[1] !== undefined) !== (m[3] === '.js') || (cli && !CLI_MODULES.has(cli[1]!))) return undefined;
  const file = m[1] === 'cli' ? `${CLI}${m[2]}.js` : m[1] ? `${SCRIPTS}${m[2]}.js` : `${STATIC}${m[2]}${m[3]}`;
  let body: string;
  try {
    body = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const response: WireResponse = {
    status: 200,
    headers: { 'content-type': TYPES[m[3]!]!, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    body,
  };
  cache.set(path, response);
  return response;
}
