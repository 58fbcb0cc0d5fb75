import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { type Header, type Pack, pack as tarPack } from 'tar-stream';
import type { EmbeddedPostgres } from './embedded.js';

/** What a backup holds, for the command's report. */
export interface BackupSummary {
  files: number;
  bytes: number;
  /** The WAL positions the restore replays between. */
  startLsn: string;
  stopLsn: string;
}

/** The backup's database session ended before the backup did. */
export class BackupConnectionLostError extends Error {
  constructor(override readonly cause: Error) {
    super(`the database connection was lost during the backup (${cause.message}): the backup is incomplete`);
  }
}

/**
 * The archive could not be written: its output failed (a full disk: ENOSPC, an I/O error).
 * Told apart from the other failures so the command can name the file and what to do; the
 * stream's own error names neither (a write to an open file has no path).
 */
export class BackupOutputError extends Error {
  readonly code: string | undefined;
  constructor(override readonly cause: Error) {
    super(cause.message);
    this.code = (cause as NodeJS.ErrnoException).code;
  }
}

/** A query failed because the session ended: the server shut down, crashed, or ended the backend. */
function sessionEnded(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && code.startsWith('57P')) ||
    (typeof message === 'string' && message.includes('Connection terminated'))
  );
}

/** The service's own files beside the embedded server's, which a restore needs too. */
const SERVICE_FILES = ['postgres.password', 'secret-keys'];

/**
 * What PostgreSQL's documentation says a base backup may leave out ("Backing Up the Data
 * Directory"): the running server's pid file and options, runtime state rebuilt at start,
 * and temporary files. pg_wal is copied apart, after the backup stops.
 */
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);
const EMPTIED_DIRECTORIES = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);

const CHUNK = 1 << 20;

/** The archive being written, what it holds so far, and the writing side's failure. */
interface Archive {
  pack: Pack;
  summary: { files: number; bytes: number };
  /** Rejects when the output fails (a full disk): every wait on the archive races it. */
  broken: Promise<never>;
}

/**
 * An online backup of the embedded database, written to `out` as a gzipped tar of the data
 * directory that `restoreBackup` (or `tar -xzf`) turns back into one. PostgreSQL's
 * low-level API, as pg_basebackup uses it (the embedded package ships no pg_basebackup):
 * a temporary replication slot keeps the WAL the backup needs from the start;
 * `pg_backup_start` checkpoints; the files are copied while the service keeps writing
 * (pages torn by a concurrent write are repaired by the WAL replay); `pg_backup_stop`
 * gives the `backup_label` that tells the restored server where to replay from; then
 * the WAL from the start to the stop goes in, so the archive restores on its own.
 */
export async function writeBackup(
  embedded: EmbeddedPostgres,
  dataDir: string,
  out: Writable,
  /** Aborted, the backup fails with its reason (its session ended, the output destroyed). */
  signal?: AbortSignal,
): Promise<BackupSummary> {
  signal?.throwIfAborted();
  const pgDir = join(dataDir, 'postgres');
  const client = new pg.Client({ connectionString: embedded.adminUrl });
  // The session holds the backup open: lost (the server stopped or restarted, the backend
  // terminated), the backup is lost with it. Between two queries pg reports that only as an
  // 'error' event, which without a listener ended the process and left everything behind.
  let connectionLost: Error | undefined;
  const lost = new Promise<never>((_, reject) => {
    client.on('error', (err) => {
      connectionLost ??= new BackupConnectionLostError(err);
      reject(connectionLost);
    });
  });
  lost.catch(() => undefined);
  await Promise.race([client.connect(), lost]);
  const pack = tarPack();
  // Level 1: half the CPU of the default level for 1% more bytes (433 MB of data files:
  // 5.3 s against 10.5 s, 138.2 MB against 136.5 MB), and the backup shares the cores with
  // the service.
  const written = pipeline(pack, createGzip({ level: 1 }), out);
  // The output's own failure; not one this function caused by destroying the pack.
  let outputFailure: BackupOutputError | undefined;
  let destroyedWith: unknown;
  written.catch((err: Error) => {
    if (err !== destroyedWith) outputFailure ??= new BackupOutputError(err);
  });
  // A failure of the writing side (a full disk) or of the session fails the backup, without
  // a wait that never ends.
  const broken = new Promise<never>((_, reject) => {
    written.catch((err: Error) => reject(outputFailure ?? err));
    lost.catch(reject);
    const onAbort = () => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    void written.finally(() => signal?.removeEventListener('abort', onAbort)).catch(() => undefined);
  });
  broken.catch(() => undefined);
  const query = <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) =>
    Promise.race([client.query<R>(sql, params), broken]);
  const summary = { files: 0, bytes: 0 };
  const archive: Archive = { pack, summary, broken };
  try {
    const slot = `tagtrail_backup_${randomBytes(6).toString('hex')}`;
    await query('SELECT pg_create_physical_replication_slot($1, true, true)', [slot]);
    const { rows: started } = await query<{ lsn: string; segment: string }>(
      `SELECT lsn::text, pg_walfile_name(lsn) AS segment
         FROM pg_backup_start($1, true) AS lsn`,
      [`tagtrail ${new Date().toISOString()}`],
    );
    const start = started[0]!;
    await addTree(archive, pgDir, 'postgres');
    const { rows: stopped } = await query<{
      lsn: string;
      segment: string;
      labelfile: string;
      spcmapfile: string | null;
    }>(
      `SELECT lsn::text, pg_walfile_name(lsn) AS segment, labelfile, spcmapfile
         FROM pg_backup_stop(false)`,
    );
    const stop = stopped[0]!;
    await addBuffer(archive, 'postgres/backup_label', Buffer.from(stop.labelfile));
    if (stop.spcmapfile) await addBuffer(archive, 'postgres/tablespace_map', Buffer.from(stop.spcmapfile));
    await addWal(archive, join(pgDir, 'pg_wal'), start.segment, stop.segment);
    for (const name of SERVICE_FILES) await addFile(archive, join(dataDir, name), name);
    pack.finalize();
    await Promise.race([written, broken]);
    return { ...summary, startLsn: start.lsn, stopLsn: stop.lsn };
  } catch (err) {
    const failure = connectionLost ?? (sessionEnded(err) ? new BackupConnectionLostError(err as Error) : err);
    destroyedWith = failure;
    pack.destroy(failure as Error);
    // The output closed before the caller removes it.
    await written.catch(() => undefined);
    // A full disk may surface first as the pack's or an entry's error: the output's is the cause.
    throw connectionLost ?? outputFailure ?? failure;
  } finally {
    // Ends a backup left open by a failure and drops the temporary slot with the session.
    await client.end().catch(() => undefined);
  }
}

async function addTree(archive: Archive, dir: string, name: string) {
  await entry(archive, { name, type: 'directory', mode: 0o700 });
  const children = await readdir(dir).catch(missing([] as string[]));
  for (const child of children.sort()) {
    const path = join(dir, child);
    const stat = await lstat(path).catch(missing(null));
    if (!stat || child.startsWith('pgsql_tmp') || SKIPPED_FILES.has(child)) continue;
    const inner = `${name}/${child}`;
    if (stat.isDirectory()) {
      if (name === 'postgres' && EMPTIED_DIRECTORIES.has(child)) {
        await entry(archive, { name: inner, type: 'directory', mode: 0o700 });
        if (child === 'pg_wal')
          await entry(archive, { name: `${inner}/archive_status`, type: 'directory', mode: 0o700 });
      } else {
        await addTree(archive, path, inner);
      }
    } else if (stat.isFile()) {
      await addFile(archive, path, inner, stat);
    }
  }
}

/** The WAL segments from the backup's first to its last (and the timelines' history files). */
async function addWal(archive: Archive, walDir: string, first: string, last: string) {
  for (const child of (await readdir(walDir)).sort()) {
    const segment = /^[0-9A-F]{24}$/.test(child) && child >= first && child <= last;
    if (segment || child.endsWith('.history'))
      await addFile(archive, join(walDir, child), `postgres/pg_wal/${child}`);
  }
}

/**
 * One file as it is now. A file the server grows while it is read is cut at the size it
 * had, one it shrinks is padded with zeros, one it removes is left out: the replay of the
 * WAL writes every such page again.
 */
async function addFile(archive: Archive, path: string, name: string, known?: Stats) {
  const stat = known ?? (await lstat(path).catch(missing(null)));
  if (!stat?.isFile()) return;
  const handle = await open(path, 'r').catch(missing(null));
  if (!handle) return;
  try {
    await whileWritable(archive);
    let sink: ReturnType<Pack['entry']> | undefined;
    const ended = new Promise<void>((resolve, reject) => {
      sink = archive.pack.entry(
        { name, size: stat.size, mode: stat.mode & 0o777, mtime: stat.mtime },
        (err) => (err ? reject(err) : resolve()),
      );
    });
    ended.catch(() => undefined);
    const out = sink as ReturnType<Pack['entry']>;
    // When the output fails the entry fails with it; `broken` is where that is reported.
    out.on('error', () => undefined);
    let done = 0;
    while (done < stat.size) {
      const buffer = Buffer.alloc(Math.min(CHUNK, stat.size - done));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, done);
      // Shrunk under us: zeros for the rest.
      const chunk = bytesRead === 0 ? buffer : buffer.subarray(0, bytesRead);
      done += chunk.length;
      if (!out.write(chunk)) {
        await Promise.race([
          new Promise<void>((resolve) => out.once('drain', () => resolve())),
          archive.broken,
        ]);
      }
    }
    out.end(undefined);
    await Promise.race([ended, archive.broken]);
    archive.summary.files++;
    archive.summary.bytes += stat.size;
  } finally {
    await handle.close();
  }
}

async function addBuffer(archive: Archive, name: string, content: Buffer) {
  await entry(archive, { name, size: content.length, mode: 0o600 }, content);
  archive.summary.files++;
  archive.summary.bytes += content.length;
}

async function entry(
  archive: Archive,
  header: Partial<Header> & Pick<Header, 'name'>,
  content?: Buffer,
): Promise<void> {
  await whileWritable(archive);
  const added = new Promise<void>((resolve, reject) => {
    archive.pack.entry(header, content ?? '', (err) => (err ? reject(err) : resolve()));
  });
  return Promise.race([added, archive.broken]);
}

/**
 * Returns while the archive can take entries. Once its output has failed, the pack is
 * destroyed and refuses them ("already finalized or destroyed", thrown where the entry is
 * made): the backup fails with the output's own error instead, a full disk say.
 */
async function whileWritable(archive: Archive): Promise<void> {
  const pack = archive.pack as Pack & { destroyed?: boolean; destroying?: boolean };
  if (pack.destroyed || pack.destroying) await archive.broken;
}

/** Turns "it is gone" (removed while we walked) into `fallback`; anything else still throws. */
function missing<T>(fallback: T): (err: NodeJS.ErrnoException) => T {
  return (err) => {
    if (err.code === 'ENOENT') return fallback;
    throw err;
  };
}
