/**
 * What the benches that run the compiled service as an operator does share (bench/soak.mjs,
 * bench/create-burst.mjs, bench/restore-drill.mjs): its environment, a child process started
 * and awaited, its embedded database's URL, and a load from bench/api-load.mjs in a process
 * of its own.
 */
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const MAIN = new URL('../dist/src/cli/main.js', import.meta.url).pathname;
const LOAD = new URL('./api-load.mjs', import.meta.url).pathname;

/**
 * `tagtrail serve`'s environment on `dataDir` (the embedded PostgreSQL and broker, any free
 * ports, the rate limit out of the way, logging at warn), with `extra` added; the
 * variables that would point it elsewhere are left out.
 */
export function serviceEnv(dataDir, extra = {}) {
  const env = {
    ...process.env,
    TAGTRAIL_DATA_DIR: dataDir,
    PORT: '0',
    TAGTRAIL_MQTT_PORT: '0',
    TAGTRAIL_RATE_LIMIT: '1000000000',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  for (const name of ['DATABASE_URL', 'MQTT_URL', 'REDIS_URL', 'HOST']) delete env[name];
  return env;
}

/** A child process and its output so far; resolves once `ready` matches its output. */
export function startChild(cmd, argv, env, ready) {
  const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c) => {
    out.stdout += c;
  });
  child.stderr.on('data', (c) => {
    out.stderr += c;
  });
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = ready.exec(out.stdout + out.stderr);
      if (match) resolve({ child, out, match });
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited (${code}):\n${out.stderr}`)));
  });
}

/** `tagtrail serve` in `env`; `match[1]` is its URL. */
export const startService = (env) =>
  startChild(process.execPath, [MAIN, 'serve'], env, /tagtrail listening on (\S+)/);

/** bench/api-load.mjs's result for `job` (its comment has the fields). */
export function runLoad(job) {
  return run(process.execPath, [LOAD, JSON.stringify(job)], { maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => JSON.parse(stdout.trim().split('\n').at(-1)),
  );
}

/** The URL of the embedded PostgreSQL that a service on `dataDir` runs, as its superuser. */
export async function embeddedUrl(dataDir) {
  const password = (await readFile(join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3];
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/tagtrail`;
}
