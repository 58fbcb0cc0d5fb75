/**
 * The embedded database's first initialisation, seen from the next start: all or nothing.
 * `serve` killed outright during initdb on a new data directory (with initdb, as a machine
 * that goes down takes both) leaves no cluster without its password: the next start removes
 * the unfinished work and initialises again. The superuser's password never goes to /tmp.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  buildIfStale,
  childEnv,
  MAIN,
  ROOT,
  type ServiceProcess,
  spawnService,
} from '../helpers/compiled.js';

let root: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tagtrail-first-start-'));
  await chmod(root, 0o755);
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  for (const service of services) await service.stop(10_000).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

/** The processes whose parent is `pid` (Linux). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('the first start of the embedded database', () => {
  it('killed during initdb, leaves a directory the next start initialises', async () => {
    const dataDir = join(root, 'data');
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      cwd: ROOT,
      env: childEnv({ TAGTRAIL_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TAGTRAIL_MQTT_PORT: '0' }),
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let work = '';
    // initdb has begun writing the cluster, in a work directory beside postgres/.
    await vi.waitFor(
      async () => {
        const names = await readdir(dataDir).catch(() => [] as string[]);
        const found = names.find((n) => n.startsWith('postgres.init-'));
        expect(found).toBeDefined();
        work = join(dataDir, found as string);
        expect(existsSync(join(work, 'pgdata', 'PG_VERSION'))).toBe(true);
      },
      { timeout: 60_000, interval: 10 },
    );
    // The password initdb reads is inside the data directory, readable by its owner only.
    expect((await stat(join(work, 'password'))).mode & 0o077).toBe(0);
    const initdb = childrenOf(child.pid as number);
    child.kill('SIGKILL');
    for (const pid of initdb) process.kill(pid, 'SIGKILL');
    await exited;
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(false);

    const service = await spawnService({
      TAGTRAIL_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      TAGTRAIL_MQTT_PORT: '0',
      LOG_LEVEL: 'warn',
    });
    services.push(service);
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    expect((await readdir(dataDir)).filter((n) => n.startsWith('postgres.init-'))).toEqual([]);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  }, 180_000);
});
