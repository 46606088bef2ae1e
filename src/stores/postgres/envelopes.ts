import type pg from 'pg';
import type { EnvelopeStore, HeldRewrite } from '../../engine/store/envelopes.js';
import { tokenBytes } from '../receipt-bytes.js';
import { query } from './sql.js';

/**
 * One statement for all the rewrites: the sent row keeps the system attributes
 * (message-rows.ts), and is rewritten only while its delivery row holds the receipt.
 */
const REWRITE = `UPDATE messages m SET system_attributes = r.attributes
  FROM unnest($2::bigint[], $3::bytea[], $4::text[]) AS r(seq, token, attributes), deliveries d
  WHERE m.queue_id = $1 AND m.seq = r.seq AND d.queue_id = $1 AND d.seq = r.seq AND d.receipt = r.token
  RETURNING m.seq`;

export class PostgresEnvelopes implements EnvelopeStore {
  constructor(private readonly pool: pg.Pool) {}

  async rewrite(queueId: number, rewrites: readonly HeldRewrite[]): Promise<boolean[]> {
    if (!rewrites.length) return [];
    const { rows } = await query<{ seq: string }>(this.pool, REWRITE, [
      queueId,
      rewrites.map((r) => r.seq),
      rewrites.map((r) => tokenBytes(r.token)),
      rewrites.map((r) => JSON.stringify(r.systemAttributes)),
    ]);
    const done = new Set(rows.map((r) => Number(r.seq)));
    return rewrites.map((r) => done.has(r.seq));
  }
}
