import { createWriteStream, existsSync } from 'node:fs';
import { chmod, chown, type FileHandle, lstat, mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { makeDataDirectory } from '../make-directories.js';
import { type RunAs, runAsUser } from './embedded-init.js';

/**
 * A restore refused: the data directory already holds a database, or the archive is not a
 * tagtrail backup. What the restore had unpacked before the refusal is removed again.
 */
export class RestoreError extends Error {}

/**
 * Made first by a restore, removed last: found later, a restore into the directory is
 * running or was killed outright (SIGKILL, the power lost), which leaves what it had
 * unpacked. Without it, a start on such a directory said only that postgres.password was
 * missing, and a new restore that postgres/ was not empty.
 */
export const RESTORE_MARKER = 'postgres.restoring';

/** Why a data directory holding RESTORE_MARKER is neither started nor restored into. */
export function unfinishedRestore(dataDir: string): string {
  return (
    `a restore into ${dataDir} has not finished (${RESTORE_MARKER} is there: it is running, or was killed before it ended), ` +
    'so its cluster is incomplete. Restore into a new data directory, or remove what the restore unpacked ' +
    `(postgres/, and postgres.password and secret-keys unless they were there before) and ${RESTORE_MARKER}, and restore again`
  );
}

/**
 * Unpacks a backup made by `writeBackup` into an empty data directory. The next start of
 * the service replays the WAL the backup holds, from its `backup_label`, and then serves
 * the data as it was when the backup stopped. Entries are kept inside `dataDir` (an
 * archive naming `../` or an absolute path is refused), and, as root, the files are given
 * to the user who will run the server (giveToServer). A restore that fails removes the files and directories it made,
 * and only those (a file already there is never opened: entries are created exclusively),
 * so the operator can try again at once.
 */
export async function restoreBackup(
  input: Readable,
  dataDir: string,
  /** Aborted, the restore stops reading, removes what it made and fails with the reason. */
  signal?: AbortSignal,
  /** Flushes one restored file or directory to disk; a seam for tests. */
  sync: (path: string) => Promise<void> = fsyncPath,
): Promise<{ files: number }> {
  const pgDir = join(dataDir, 'postgres');
  if (existsSync(join(dataDir, RESTORE_MARKER))) throw new RestoreError(unfinishedRestore(dataDir));
  if ((await readdir(pgDir).catch(() => [])).length > 0) {
    throw new RestoreError(`${pgDir} is not empty: restore into a new data directory (TAGTRAIL_DATA_DIR)`);
  }
  signal?.throwIfAborted();
  const made = new Made();
  const onAbort = () => input.destroy(signal?.reason as Error);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    made.directory(await makeDataDirectory(dataDir));
    const marker = join(dataDir, RESTORE_MARKER);
    await writeFile(marker, `${process.pid}\n`, { flag: 'wx', mode: 0o600 }).catch(
      (err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? new RestoreError(unfinishedRestore(dataDir)) : err;
      },
    );
    made.file(marker);
    const { files, unpacked } = await unpackInto(input, dataDir, made, signal);
    // On disk before the marker goes: a power cut after "restored" must not leave a cluster
    // whose files were still in the page cache, with nothing saying it is incomplete.
    for (const name of unpacked) await syncTree(join(dataDir, name), sync);
    await sync(dataDir);
    // The data directory's own name, when the restore made it.
    await sync(dirname(dataDir));
    await rm(marker);
    // The marker's removal made durable too, so the restore is not reported unfinished later.
    await sync(dataDir);
    return { files };
  } catch (err) {
    await made.remove();
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The archive at `file`, opened before anything is made: a path that is missing, unreadable
 * or a directory fails the restore saying so, with the data directory untouched.
 */
export async function openArchive(file: string): Promise<Readable> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    if ((await handle.stat()).isDirectory()) throw new RestoreError(`${file} is a directory, not a backup`);
    return handle.createReadStream();
  } catch (err) {
    await handle?.close();
    if (err instanceof RestoreError) throw err;
    throw new RestoreError(`cannot read the backup ${file}: ${(err as Error).message}`);
  }
}

async function unpackInto(
  input: Readable,
  dataDir: string,
  made: Made,
  signal: AbortSignal | undefined,
): Promise<{ files: number; unpacked: Set<string> }> {
  const pgDir = join(dataDir, 'postgres');
  let files = 0;
  let sawLabel = false;
  /** The top-level names the archive put in the data directory. */
  const unpacked = new Set<string>();
  const unpack = extract();
  unpack.on('entry', (header, stream, next) => {
    // A refused archive destroys the unpacking, and with it this entry's stream: that error
    // is the one `pipeline` below reports.
    stream.on('error', () => undefined);
    const fail = (err: Error) => {
      stream.resume();
      next(err);
    };
    const name = normalize(header.name);
    // normalize() has folded every inner `..`: one that escapes can only lead.
    if (name.startsWith('..') || name.startsWith(sep)) {
      fail(new RestoreError(`the archive names ${header.name}, outside the data directory`));
      return;
    }
    const path = join(dataDir, name);
    unpacked.add(name.split(sep)[0] as string);
    if (header.type === 'directory') {
      stream.resume();
      made.during(mkdir(path, { recursive: true, mode: 0o700 })).then((first) => {
        made.directory(first);
        next();
      }, next);
      return;
    }
    if (header.type !== 'file') {
      fail(new RestoreError(`the archive holds ${header.name}, a ${header.type}: not a tagtrail backup`));
      return;
    }
    if (name === join('postgres', 'backup_label')) sawLabel = true;
    made
      .during(
        mkdir(dirname(path), { recursive: true, mode: 0o700 }).then((first) => {
          made.directory(first);
          const file = createWriteStream(path, { mode: header.mode & 0o700 || 0o600, flags: 'wx' });
          // Recorded once opened: a file that was there already (EEXIST) is not ours to remove.
          file.once('open', () => made.file(path));
          return pipeline(stream, file).catch((err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST'
              ? new RestoreError(
                  `${path} exists already: restore into a new data directory (TAGTRAIL_DATA_DIR)`,
                )
              : err;
          });
        }),
      )
      .then(() => {
        files++;
        next();
      }, next);
  });
  try {
    await pipeline(input, createGunzip(), unpack);
  } catch (err) {
    if (err instanceof RestoreError) throw err;
    if (signal?.aborted) throw signal.reason;
    // A system call that failed (a full disk: ENOSPC, a read-only one, I/O errors, the archive
    // unreadable) is that, not a damaged archive: its message names the call and the path.
    const { syscall, code, message } = err as NodeJS.ErrnoException;
    if (syscall) {
      throw Object.assign(
        new Error(`the restore into ${dataDir} failed (what it unpacked is removed): ${message}`),
        {
          code,
        },
      );
    }
    throw new RestoreError(`not a readable backup: ${(err as Error).message}`);
  }
  if (!sawLabel) throw new RestoreError('the archive has no postgres/backup_label: not a tagtrail backup');
  // PostgreSQL starts only on a data directory of its own user, readable by it alone.
  await chmod(pgDir, 0o700);
  await giveToServer(dataDir, unpacked);
  return { files, unpacked };
}

/**
 * As root, the restored files go to whoever will run the server on them. A data directory
 * that belongs to another user (the systemd unit's /var/lib/tagtrail, which its
 * StateDirectory gives to the `tagtrail` user the service runs as) is that user's: every file
 * the restore made goes to them. Otherwise (a new directory, or root's) the service runs as
 * root and its PostgreSQL as `postgres` (runAsUser), which gets the cluster. Before, the
 * cluster always went to `postgres` and the service's files stayed root's, so the unit's
 * service could read none of them and did not start. Not root: the files are already ours.
 */
async function giveToServer(dataDir: string, unpacked: Set<string>): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const owner = await lstat(dataDir);
  if (owner.uid !== 0) {
    for (const name of unpacked) await chownTree(join(dataDir, name), { uid: owner.uid, gid: owner.gid });
    return;
  }
  const user = runAsUser();
  if (user.uid !== undefined) await chownTree(join(dataDir, 'postgres'), user);
}

/** What a restore created, to be removed if it fails: the newest first. */
class Made {
  private readonly paths: string[] = [];
  private pending: Promise<unknown> = Promise.resolve();

  /** Work on the file system that must have settled before what it made is removed. */
  during<T>(work: Promise<T>): Promise<T> {
    this.pending = work.catch(() => undefined);
    return work;
  }

  /** `first` is what a recursive mkdir returns: the topmost directory it created, if any. */
  directory(first: string | undefined): void {
    if (first !== undefined) this.paths.push(first);
  }

  file(path: string): void {
    this.paths.push(path);
  }

  async remove(): Promise<void> {
    await this.pending;
    for (const path of this.paths.reverse()) await rm(path, { recursive: true, force: true });
  }
}

async function chownTree(path: string, user: RunAs): Promise<void> {
  await chown(path, user.uid as number, user.gid ?? (user.uid as number));
  if (!(await lstat(path)).isDirectory()) return;
  for (const child of await readdir(path)) await chownTree(join(path, child), user);
}

/** fsync of a file or a directory (opened read-only: a directory cannot be opened to write). */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Every file under `path`, then each directory after its entries (a new name is durable once its directory is). */
async function syncTree(path: string, sync: (path: string) => Promise<void>): Promise<void> {
  const stat = await lstat(path);
  if (stat.isDirectory()) {
    for (const child of (await readdir(path)).sort()) await syncTree(join(path, child), sync);
  } else if (!stat.isFile()) {
    return;
  }
  await sync(path);
}
