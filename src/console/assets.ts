import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WireResponse } from '../protocols/wire.js';

/**
 * The console's static files. The browser scripts are TypeScript in src/console/browser,
 * compiled by the ordinary `tsc` build next to this file; the stylesheet and icon are
 * plain files in src/console/static, read from the package as it ships. Nothing is built
 * at start-up and nothing comes from the network. The scripts import the shapes and
 * helpers they share with the CLI from src/wire (`../../wire/<name>.js`, which a page at
 * /console/assets/js/ asks for as /console/wire/<name>.js), so those are served too.
 */
const SCRIPTS = fileURLToPath(new URL('./browser/', import.meta.url));
const WIRE = fileURLToPath(new URL('../wire/', import.meta.url));
const STATIC = fileURLToPath(new URL('../../../src/console/static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const cache = new Map<string, WireResponse>();

/** `/console/assets/js/<name>.js`, `/console/wire/<name>.js`, `/console/assets/<name>.css|svg`; anything else is not found. */
export async function serveAsset(path: string): Promise<WireResponse | undefined> {
  const hit = cache.get(path);
  if (hit) return hit;
  const file = fileOf(path);
  if (!file) return undefined;
  let body: string;
  try {
    body = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const response: WireResponse = {
    status: 200,
    headers: {
      'content-type': TYPES[file.slice(file.lastIndexOf('.'))]!,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    },
    body,
  };
  cache.set(path, response);
  return response;
}

function fileOf(path: string): string | undefined {
  const wire = /^\/console\/wire\/([a-z0-9-]+)\.js$/.exec(path);
  if (wire) return `${WIRE}${wire[1]}.js`;
  const m = /^\/console\/assets\/(?:(js)\/)?([a-z0-9-]+)(\.js|\.css|\.svg)$/.exec(path);
  if (!m || (m[1] === 'js') !== (m[3] === '.js')) return undefined;
  return m[1] ? `${SCRIPTS}${m[2]}.js` : `${STATIC}${m[2]}${m[3]}`;
}
