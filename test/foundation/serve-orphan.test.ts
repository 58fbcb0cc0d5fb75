/**
 * `tagtrail serve` after a service killed outright (kill -9) left its embedded PostgreSQL
 * running: the next service takes that server over instead of joining it, so it is
 * supervised (a killed postmaster comes back), shut down with the service, and a second
 * service on the same directory waits as it does for any live one.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildIfStale, postmasterPid, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { alive, exited } from '../helpers/orphan.js';

let dir: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-serve-orphan-'));
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  for (const service of services) await service.stop(5_000).catch(() => undefined);
  const pid = await postmasterPid(dir);
  if (pid !== null && alive(pid)) process.kill(pid, 'SIGINT');
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({
  TAGTRAIL_DATA_DIR: dir,
  PORT: '0',
  HOST: '127.0.0.1',
  TAGTRAIL_MQTT_PORT: '0',
  LOG_LEVEL: 'warn',
});

async function serve(): Promise<ServiceProcess> {
  const service = await spawnService(env());
  services.push(service);
  return service;
}

async function ready(url: string): Promise<number> {
  return (await fetch(`${url}/readyz`).catch(() => null))?.status ?? 0;
}

describe('tagtrail serve after a service was killed outright', () => {
  it('takes its PostgreSQL over, supervises it, stops it, and makes a second service wait', async () => {
    const first = await serve();
    const orphan = (await postmasterPid(dir)) as number;
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(alive(orphan)).toBe(true);

    const second = await serve();
    expect(second.stderr()).toContain(`(pid ${orphan}) was left running by a tagtrail process that is gone`);
    expect(alive(orphan)).toBe(false);
    expect(JSON.parse(await readFile(join(dir, 'postgres.owner'), 'utf8'))).toMatchObject({
      pid: second.child.pid,
      role: 'service',
    });
    expect(await ready(second.url)).toBe(200);

    // Its own now: a killed postmaster is restarted, and the service serves again.
    const own = (await postmasterPid(dir)) as number;
    process.kill(own, 'SIGKILL');
    await vi.waitFor(
      async () => {
        expect(await postmasterPid(dir)).not.toBe(own);
        expect(await ready(second.url)).toBe(200);
      },
      { timeout: 60_000, interval: 200 },
    );

    // A second service on the same directory waits for it: it says so, and does not start.
    // Watched, not timed: on a loaded machine the process may take seconds to get that far.
    let starting: ServiceProcess | undefined;
    const waiting = spawnService(env(), undefined, (s) => {
      starting = s;
    });
    let third: ServiceProcess | undefined;
    void waiting.then((s) => {
      third = s;
      services.push(s);
    });
    await vi.waitFor(() => expect(starting?.stderr()).toContain('waiting for it to finish before starting'), {
      timeout: 60_000,
      interval: 100,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(third).toBeUndefined();

    // Stopped, the service shuts its PostgreSQL down; then the waiting one starts its own.
    const running = (await postmasterPid(dir)) as number;
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    await exited(running);
    const next = await waiting;
    expect(await ready(next.url)).toBe(200);
    expect(next.stderr()).toContain('waiting for it to finish before starting');
    const last = (await postmasterPid(dir)) as number;
    expect(await next.stop()).toEqual({ code: 0, signal: null });
    await exited(last);
    expect(existsSync(join(dir, 'postgres.owner'))).toBe(false);
  }, 240_000);
});
