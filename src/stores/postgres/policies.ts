import type pg from 'pg';
import type { PolicyRecord, PolicyStore } from '../../engine/store/policies.js';
import { query } from './sql.js';

interface PolicyRow {
  account_id: string;
  name: string;
  pattern: string;
  apply_to: string;
  priority: number;
  definition: string;
}

/** Runtime policies (the management API's), one row each, shared by every node. */
export class PostgresPolicies implements PolicyStore {
  constructor(private readonly pool: pg.Pool) {}

  async list(): Promise<PolicyRecord[]> {
    const { rows } = await query<PolicyRow>(this.pool, 'SELECT * FROM policies ORDER BY account_id, name', []);
    return rows.map((r) => ({
      accountId: r.account_id,
      name: r.name,
      pattern: r.pattern,
      applyTo: r.apply_to,
      priority: Number(r.priority),
      definition: JSON.parse(r.definition) as Record<string, unknown>,
    }));
  }

  async put(p: PolicyRecord): Promise<void> {
    await query(
      this.pool,
      `INSERT INTO policies (account_id, name, pattern, apply_to, priority, definition) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (account_id, name) DO UPDATE SET pattern = excluded.pattern, apply_to = excluded.apply_to,
         priority = excluded.priority, definition = excluded.definition`,
      [p.accountId, p.name, p.pattern, p.applyTo, p.priority, JSON.stringify(p.definition)],
    );
  }

  async delete(accountId: string, name: string): Promise<boolean> {
    const { rowCount } = await query(this.pool, 'DELETE FROM policies WHERE account_id = $1 AND name = $2', [
      accountId,
      name,
    ]);
    return rowCount === 1;
  }
}
