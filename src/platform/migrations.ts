// Numbered SQL files under src/migrations, applied in order, each in its own
// transaction, under an advisory lock so that concurrent starts (several
// instances, or the CLI beside the service) never apply one twice.
// A landed migration is never edited; its checksum is recorded and checked.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { Database } from './db.ts';

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);
const LOCK_KEY = 727_274_001; // arbitrary, constant: "migrations" lock

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export async function listMigrationFiles(): Promise<string[]> {
  const files = await readdir(MIGRATIONS_DIR);
  return files.filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
}

export async function migrate(db: Database): Promise<MigrationResult> {
  return db.withClient(async (client) => {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
      const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations');
      const done = new Map(rows.map((r) => [r.name, r.checksum]));
      const applied: string[] = [];
      for (const file of await listMigrationFiles()) {
        const sql = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
        const checksum = createHash('sha256').update(sql).digest('hex');
        const known = done.get(file);
        if (known !== undefined) {
          if (known !== checksum) throw new Error(`migration ${file} was changed after it was applied`);
          continue;
        }
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [file, checksum]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${file} failed: ${(error as Error).message}`);
        }
        applied.push(file);
      }
      return { applied, alreadyApplied: done.size };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    }
  });
}
