import { Command } from 'commander';
import { join } from 'node:path';
import { defaults } from '../server/server-config.js';
import { backupDatabase } from '../stores/sqlite/backup.js';

/**
 * `redrive backup <file>`: a consistent copy of a SQLite data directory's database,
 * taken while its server runs (docs/backup.md). It reads the file directly, so it runs
 * on the server's machine with access to --data-dir; it needs no endpoint on the server,
 * and so no new powers for anyone who can reach its port.
 */
export function backupCommand(): Command {
  return new Command('backup')
    .description("Copy a SQLite server's data, consistently, while it runs")
    .argument('<file>', 'the backup file to create (it must not exist)')
    .option('--data-dir <dir>', 'the data directory of the server to back up', defaults.dataDir)
    .action(async (file: string, opts: { dataDir: string }) => {
      const started = Date.now();
      const r = await backupDatabase(join(opts.dataDir, 'redrive.db'), file).catch((e: Error) => {
        throw new Error(`redrive backup: ${e.message}`);
      });
      const mb = (r.bytes / 1024 / 1024).toFixed(1);
      process.stdout.write(
        `backed up ${opts.dataDir} to ${file}: ${r.queues} queues, ${r.messages} messages, ${mb} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    });
}
