import type Database from 'better-sqlite3';
import type { EnvelopeStore, HeldRewrite } from '../../engine/store/envelopes.js';
import type { GroupCommit } from './group-commit.js';
import { tokenBytes } from '../receipt-bytes.js';

/**
 * The sent row keeps the system attributes (message-rows.ts); the delivery row says who
 * holds the message, so the rewrite checks the receipt there. One commit for them all.
 */
export class SqliteEnvelopes implements EnvelopeStore {
  private readonly update;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.update = db.prepare(
      `UPDATE messages SET system_attributes = ?
      WHERE seq = ? AND EXISTS (SELECT 1 FROM deliveries WHERE queue_id = ? AND seq = ? AND receipt = ?)`,
    );
  }

  rewrite(queueId: number, rewrites: readonly HeldRewrite[]): Promise<boolean[]> {
    if (!rewrites.length) return Promise.resolve([]);
    return this.commit.run(() =>
      rewrites.map(
        (r) =>
          this.update.run(JSON.stringify(r.systemAttributes), r.seq, queueId, r.seq, tokenBytes(r.token)).changes === 1,
      ),
    );
  }
}
