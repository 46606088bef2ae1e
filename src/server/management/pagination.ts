import type { ListPage } from '../../wire/broker-api.js';

/**
 * RabbitMQ's list parameters (`page`, `page_size`, `name`, `sort`, `sort_reverse`,
 * `columns`) on the management API's listings. A list asked without `page` comes whole, as
 * from RabbitMQ, but never longer than `MAX_UNPAGED` items: past that, page through it.
 */
export const MAX_UNPAGED = 10_000;
/** RabbitMQ's largest page. */
const MAX_PAGE_SIZE = 500;
const DEFAULT_PAGE_SIZE = 100;

export class ListError extends Error {
  override readonly name = 'ListError';
  constructor(
    readonly error: string,
    reason: string,
  ) {
    super(reason);
  }
}

export interface ListQuery {
  /** Undefined: the whole list (up to MAX_UNPAGED). */
  page?: number;
  pageSize: number;
  /** Lower-cased: a case-insensitive substring of the name, as RabbitMQ's `name` filter. */
  name?: string;
  sort?: string;
  sortReverse: boolean;
  columns?: string[];
}

export function parseListQuery(query: string): ListQuery {
  const q = new URLSearchParams(query);
  const pageText = q.get('page');
  const sizeText = q.get('page_size');
  if ((pageText !== null && !/^\d+$/.test(pageText)) || (sizeText !== null && !/^\d+$/.test(sizeText))) {
    throw new ListError('bad_request', 'Pagination parameters are invalid');
  }
  const page = pageText === null ? undefined : Number(pageText);
  const pageSize = sizeText === null ? DEFAULT_PAGE_SIZE : Number(sizeText);
  if (page !== undefined && (page < 1 || pageSize < 1 || pageSize > MAX_PAGE_SIZE)) {
    throw new ListError(
      'invalid_pagination_parameters',
      `Invalid pagination parameters: page number ${page}, page size ${sizeText ?? 'undefined'}`,
    );
  }
  if (q.get('use_regex') === 'true')
    throw new ListError('bad_request', 'use_regex is not supported by Redrive: the name filter is a substring');
  const columns = q
    .get('columns')
    ?.split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  return {
    page,
    pageSize,
    name: q.get('name')?.toLowerCase() || undefined,
    sort: q.get('sort') || undefined,
    sortReverse: q.get('sort_reverse') === 'true',
    columns: columns?.length ? columns : undefined,
  };
}

/** Items filtered by name, before the page is cut: what to fetch details for. */
export function selectPage<T>(
  all: T[],
  nameOf: (x: T) => string,
  q: ListQuery,
): { items: T[]; total: number; filtered: number } {
  const filtered = q.name ? all.filter((x) => nameOf(x).toLowerCase().includes(q.name!)) : all;
  if (q.page === undefined)
    return { items: filtered.slice(0, MAX_UNPAGED), total: all.length, filtered: filtered.length };
  const pages = Math.max(1, Math.ceil(filtered.length / q.pageSize));
  if (q.page > pages) {
    throw new ListError(
      'page_out_of_range',
      `Page out of range, page: ${q.page} page size: ${q.pageSize}, len: ${filtered.length}`,
    );
  }
  const start = (q.page - 1) * q.pageSize;
  return { items: filtered.slice(start, start + q.pageSize), total: all.length, filtered: filtered.length };
}

/** The response body: RabbitMQ's paged object with `page`, else the plain array; sorted and cut to `columns`. */
export function listBody<T extends object>(
  items: T[],
  q: ListQuery,
  counts: { total: number; filtered: number },
): T[] | Record<string, unknown>[] | ListPage<T | Record<string, unknown>> {
  const sorted = q.sort ? sortBy(items, q.sort, q.sortReverse) : q.sortReverse ? [...items].reverse() : items;
  const shown = q.columns ? sorted.map((x) => pick(x, q.columns!)) : sorted;
  if (q.page === undefined) return shown;
  return {
    filtered_count: counts.filtered,
    item_count: shown.length,
    items: shown,
    page: q.page,
    page_count: Math.max(1, Math.ceil(counts.filtered / q.pageSize)),
    page_size: q.pageSize,
    total_count: counts.total,
  };
}

/**
 * A path segment that would walk into a prototype rather than the item's own data: such a
 * column or sort key names nothing (as a column RabbitMQ does not know).
 */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * One object's fields cut to `columns` (dotted paths reach into nested objects, as in
 * RabbitMQ). The paths are the client's, and so are the keys of what they walk (an AMQP
 * client's properties): only own fields are read, and the result is built of null-prototype
 * objects, so no path can reach or write a shared prototype.
 */
export function pick(x: object, columns: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const c of columns) {
    const path = c.split('.');
    const v = valueAt(x, path);
    const at = v === undefined ? undefined : parentIn(out, path);
    if (at) defineOwn(at, path[path.length - 1]!, v);
  }
  return out;
}

/** The object of `out` to hold the path's last field, made as needed; undefined when a shorter column's value is in the way. */
function parentIn(out: Record<string, unknown>, path: string[]): Record<string, unknown> | undefined {
  let at = out;
  for (const p of path.slice(0, -1)) {
    const next = Object.hasOwn(at, p) ? at[p] : undefined;
    if (next !== undefined && (typeof next !== 'object' || next === null)) return undefined;
    at = (next as Record<string, unknown> | undefined) ?? defineOwn(at, p, Object.create(null));
  }
  return at;
}

function defineOwn<T>(o: Record<string, unknown>, key: string, value: T): T {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

/** The own field at a dotted path, or undefined (also for a path through a prototype key). */
function valueAt(x: unknown, path: string[]): unknown {
  let v = x;
  for (const p of path) {
    if (PROTOTYPE_KEYS.has(p) || !v || typeof v !== 'object' || !Object.hasOwn(v, p)) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

function sortBy<T extends object>(items: T[], key: string, reverse: boolean): T[] {
  const path = key.split('.');
  const sign = reverse ? -1 : 1;
  return [...items].sort((a, b) => {
    const x = sortable(valueAt(a, path));
    const y = sortable(valueAt(b, path));
    return x === y ? 0 : x === undefined ? 1 : y === undefined ? -1 : x < y ? -sign : sign;
  });
}

/**
 * A value `<` can order: an object (a client's property table, which has no prototype and
 * so no `valueOf` to compare by) sorts as a missing value does, after the rest.
 */
function sortable(v: unknown): string | number | boolean | undefined {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
}
