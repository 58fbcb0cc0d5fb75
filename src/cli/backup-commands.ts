import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { type Config, loadConfig } from '../config.js';
import { BackupOutputError, writeBackup } from '../db/backup.js';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { openArchive, restoreBackup } from '../db/restore.js';
import { oneOf } from './args.js';
import { interruption, settledBeforeExit } from './interrupt.js';
import { announceWait, notice } from './open.js';
import { print } from './output.js';

const EXTERNAL =
  'DATABASE_URL is set: back that PostgreSQL up with its own tools (pg_dump, pg_basebackup, continuous archiving); ' +
  'these commands are for the embedded database';

/** `backup` and `restore` of the embedded database (docs/operations.md, "Backups"). */
export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write an online backup of the embedded database (a .tar.gz), while the service runs or not')
    .requiredOption('--out <file>', 'the archive to write (written beside, then renamed into place)')
    .option(
      '--priority <priority>',
      'low: copy and compress at a low scheduling priority (nice 10), so a busy service keeps its CPU; normal: as started',
      oneOf('--priority', ['low', 'normal'] as const),
      'low',
    )
    .option('--json', 'print JSON')
    .action((opts: { out: string; priority: string; json?: boolean }) =>
      settledBeforeExit(runBackup(opts, loadConfig())),
    );

  program
    .command('restore')
    .description(
      'unpack a backup into an empty data directory (TAGTRAIL_DATA_DIR); the next start replays it',
    )
    .argument('<file>', 'an archive written by `tagtrail backup`')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      const config = loadConfig();
      if (config.DATABASE_URL) throw new Error(EXTERNAL);
      const input = await openArchive(file);
      const { files } = await settledBeforeExit(restoreBackup(input, config.dataDir, interruption));
      print(Boolean(opts.json), { data_dir: config.dataDir, files });
    });
}

/**
 * A backup to `opts.out`, through `<out>.partial`. However it ends short of the archive (a
 * failure, a signal: interrupt.ts), the partial file is removed and a server it started
 * for the backup is stopped.
 */
export async function runBackup(
  opts: { out: string; priority: string; json?: boolean },
  config: Pick<Config, 'dataDir' | 'DATABASE_URL'>,
  /** A seam for tests: the stream the archive goes to (a full disk is simulated there). */
  archiveStream: (output: FileHandle) => Writable = (output) => output.createWriteStream(),
): Promise<void> {
  if (config.DATABASE_URL) throw new Error(EXTERNAL);
  const partial = `${opts.out}.partial`;
  const output = await openOutput(partial);
  try {
    // Joins the service's server when it runs; otherwise starts it for the backup.
    const embedded = await startEmbeddedPostgres(config.dataDir, {
      create: false,
      onWait: announceWait(config.dataDir),
      onNotice: notice,
      signal: interruption,
    });
    try {
      // Lowered after the server started, so one started for the backup runs as usual; the
      // copy and the compression (most of a backup's CPU) run in this process.
      if (opts.priority === 'low') yieldCpu();
      const summary = await writeBackup(embedded, config.dataDir, archiveStream(output), interruption);
      await rename(partial, opts.out);
      print(Boolean(opts.json), { file: opts.out, ...summary, nice: getPriority() });
    } finally {
      await embedded.stop();
    }
  } catch (err) {
    // Closed here when the backup never got to write to it (the stream closes it otherwise).
    await output.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw err instanceof BackupOutputError ? new Error(outputFailed(err, partial)) : err;
  }
}

/**
 * What an operator is told when the archive could not be written. The stream's error names
 * no file (`ENOSPC: no space left on device, write`): this names the file and its directory,
 * says the partial file is gone, and what to do.
 */
export function outputFailed(err: BackupOutputError, partial: string): string {
  const dir = dirname(resolve(partial));
  const advice =
    err.code === 'ENOSPC' || err.code === 'EDQUOT'
      ? `the file system holding ${dir} is full (or the quota there is used up): free space there, or give --out a file on another disk, and run the backup again`
      : `check the disk holding ${dir}, or give --out a file on another disk, and run the backup again`;
  return `cannot write the backup ${partial}: ${err.message} (the partial file is removed); ${advice}`;
}

/**
 * `<out>.partial`, opened before the database is started or joined: a target that cannot
 * be written (a directory that is not there, a read-only file system, no permission) fails
 * the backup at once, naming the file, with nothing to undo. Opened by the write stream
 * instead, the failure came as a stream 'error' event nobody listened to, after the server
 * was started: the command died with a stack trace and left that server running.
 */
async function openOutput(partial: string): Promise<FileHandle> {
  try {
    return await open(partial, 'w', 0o600);
  } catch (err) {
    throw new Error(`cannot write the backup ${partial}: ${(err as Error).message}`);
  }
}

/** Nice 10 (never a higher priority than the process already has). */
function yieldCpu(): void {
  setPriority(Math.max(getPriority(), 10));
}
