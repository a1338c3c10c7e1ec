import { access } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { readBuildInfo } from '../build-info.js';
import { openStorage } from '../storage.js';
import { writeBackupFile } from './backup-file.js';
import { type CommandIo, commandConfig, commandLogger, messageOf } from './command.js';
import { EXIT } from './exit-codes.js';

export const BACKUP_USAGE = `usage: certwright-server backup --out FILE

Writes a consistent snapshot of the whole database (every table, the migration state, and a
manifest of counts, SHA-256 digests and encryption-key ids; never a key) to FILE, gzip-compressed
when FILE ends in .gz. PostgreSQL and MySQL/MariaDB are backed up while servers run on them; the
embedded database (no SVC_DATABASE_URL) only while no server runs on it — a running server takes
its own backups (SVC_BACKUP_DIR). FILE must not exist. See docs/operations/backup.md.`;

/** `certwright-server backup`: exit 0 with the manifest on stdout, 1 on failure, 2 on usage. */
export async function runBackupCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  let values: { out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    io.err(`${messageOf(error)}\n${BACKUP_USAGE}`);
    return EXIT.usage;
  }
  if (values.help) {
    io.out(BACKUP_USAGE);
    return EXIT.ok;
  }
  const out = values.out;
  if (!out) {
    io.err(`--out is required\n${BACKUP_USAGE}`);
    return EXIT.usage;
  }
  if (
    await access(out).then(
      () => true,
      () => false,
    )
  ) {
    io.err(`certwright-server backup: ${out} exists; a backup never replaces a file`);
    return EXIT.usage;
  }
  let opened: Awaited<ReturnType<typeof openStorage>>;
  try {
    const config = commandConfig(io);
    opened = await openStorage(config, commandLogger(config));
  } catch (error) {
    io.err(`certwright-server backup: ${messageOf(error)}`);
    return EXIT.failed;
  }
  try {
    const release = (await readBuildInfo()).version ?? 'unknown';
    const { manifest } = await writeBackupFile(opened.storage, opened.box, out, release);
    const rows = manifest.parts.reduce((n, p) => n + p.rows, 0);
    io.err(`backed up ${manifest.parts.length} tables, ${rows} rows, to ${out}`);
    io.out(JSON.stringify(manifest));
    return EXIT.ok;
  } catch (error) {
    io.err(`certwright-server backup: ${messageOf(error)}`);
    return EXIT.failed;
  } finally {
    await opened.close();
  }
}
