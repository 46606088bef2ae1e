import type Database from 'better-sqlite3';
import type { PolicyRecord, PolicyStore } from '../../engine/store/policies.js';
import type { GroupCommit } from './group-commit.js';

interface PolicyRow {
  account_id: string;
  name: string;
  pattern: string;
  apply_to: string;
  priority: number;
  definition: string;
}

const policyOf = (r: PolicyRow): PolicyRecord => ({
  accountId: r.account_id,
  name: r.name,
  pattern: r.pattern,
  applyTo: r.apply_to,
  priority: Number(r.priority),
  definition: JSON.parse(r.definition) as Record<string, unknown>,
});

/** Runtime policies (the management API's), one row each. */
export class SqlitePolicies implements PolicyStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.sql = {
      list: db.prepare('SELECT * FROM policies ORDER BY account_id, name'),
      put: db.prepare(
        `INSERT OR REPLACE INTO policies (account_id, name, pattern, apply_to, priority, definition) VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      delete: db.prepare('DELETE FROM policies WHERE account_id = ? AND name = ?'),
    };
  }

  async list(): Promise<PolicyRecord[]> {
    return (this.sql.list.all() as PolicyRow[]).map(policyOf);
  }

  async put(p: PolicyRecord): Promise<void> {
    await this.commit.run(() =>
      this.sql.put.run(p.accountId, p.name, p.pattern, p.applyTo, p.priority, JSON.stringify(p.definition)),
    );
  }

  delete(accountId: string, name: string): Promise<boolean> {
    return this.commit.run(() => this.sql.delete.run(accountId, name).changes === 1);
  }
}
