import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_SECRET_KEYS } from './secrets.js';

/**
 * The compiled service (`node dist/src/cli/main.js`) for tests that run it as an operator
 * does, in a process of its own: the CLI, start-up lines, exit codes, surviving outages.
 */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = join(ROOT, 'dist/src/cli/main.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command still running: what it wrote to stderr so far, and its end. */
export interface Running {
  result: Promise<Run>;
  stderr(): string;
  /** Sends the command a signal (a test stopping it as an operator or a supervisor does). */
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts a command; a test that must act at a point of its run (not after a fixed time,
 * which a loaded machine can outlast before the command gets there) watches its stderr.
 */
export function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Running {
  let stdout = '';
  let stderr = '';
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const result = new Promise<Run>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { result, stderr: () => stderr, kill: (signal) => child.kill(signal) };
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return start(cmd, args, env).result;
}

/**
 * Settings a child must not take from the test's own environment (the shell that started the
 * tests may have them): they would point it at a database, broker, Redis, port or deployment
 * the test did not set up. A test that wants one passes it.
 */
const NOT_INHERITED = [
  'DATABASE_URL',
  'MQTT_URL',
  'REDIS_URL',
  'TAGTRAIL_MQTT_PORT',
  'PORT',
  'HOST',
  'TAGTRAIL_ENV',
];

/**
 * The environment of a compiled tagtrail child (the CLI or `serve`): the test's own without
 * NOT_INHERITED, with the tests' secret keys, and `overrides` on top. An override of
 * undefined removes the variable: `TAGTRAIL_SECRET_KEYS: undefined` for a child that must use
 * the key file of its data directory, as a deployment without the setting does.
 */
export function childEnv(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // The key of the tests' in-process services, which may have sealed secrets in a database they share.
  const env: NodeJS.ProcessEnv = { ...process.env, TAGTRAIL_SECRET_KEYS: TEST_SECRET_KEYS };
  for (const name of NOT_INHERITED) delete env[name];
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** `node dist/src/cli/main.js <args>` against `databaseUrl` and `dataDir`, as an operator runs it, with silent logs. */
export function runCli(databaseUrl: string, dataDir: string, args: string[]): Promise<Run> {
  const env = childEnv({ DATABASE_URL: databaseUrl, TAGTRAIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  return run(process.execPath, [MAIN, ...args], env);
}

/** Newest modification time of the compiled sources (tests excluded). */
async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, (await stat(path)).mtimeMs);
  }
  return newest;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One build at a time across the test files running in parallel: two tsc writing dist/ at
 * once could let one test load a half-written file. A lock older than five minutes was left
 * by a killed run.
 */
async function withBuildLock(fn: () => Promise<void>): Promise<void> {
  const lock = join(ROOT, '.tmp', 'build.lock');
  await mkdir(join(ROOT, '.tmp'), { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (since > 300_000) await rm(lock, { recursive: true, force: true });
      else await pause(200);
    }
  }
  try {
    await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Compiles to dist/ when the CLI there is missing or older than a source file. */
export async function buildIfStale(): Promise<void> {
  const fresh = async () =>
    existsSync(MAIN) && (await stat(MAIN)).mtimeMs >= (await newestSource(join(ROOT, 'src')));
  if (await fresh()) return;
  await withBuildLock(async () => {
    if (await fresh()) return;
    const tsc = join(ROOT, 'node_modules/.bin/tsc');
    const built = await run(tsc, ['-p', 'tsconfig.build.json']);
    if (built.code !== 0)
      throw new Error(`tsc -p tsconfig.build.json failed:\n${built.stdout}${built.stderr}`);
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` from the start-up line. */
  url: string;
  /** Standard error so far: the start-up lines and any failure. */
  stderr(): string;
  /** Standard output so far: the JSON log. */
  stdout(): string;
  /** Set once the process has exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`); resolves with the exit. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `serve` from dist/ with `childEnv(env)` and resolves once it prints
 * `tagtrail listening on …`, or rejects with its output if it exits. `onSpawn` gets the
 * process at once, for a test that watches what it prints while it starts (or waits).
 * `runAs` (a test running as root): the user it runs as, as a systemd unit's `User=`.
 */
export function spawnService(
  env: NodeJS.ProcessEnv,
  startTimeoutMs = 90_000,
  onSpawn?: (service: ServiceProcess) => void,
  runAs: { uid?: number; gid?: number } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...runAs,
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    err += c;
  });
  let exited: ((value: NonNullable<ServiceProcess['exit']>) => void) | undefined;
  const exitedPromise = new Promise<NonNullable<ServiceProcess['exit']>>((resolve) => {
    exited = resolve;
  });
  const service: ServiceProcess = {
    child,
    url: '',
    stderr: () => err,
    stdout: () => out,
    exit: null,
    async stop(graceMs = 30_000) {
      if (!service.exit) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exitedPromise;
        clearTimeout(timer);
      }
      return service.exit as NonNullable<ServiceProcess['exit']>;
    },
  };
  child.on('exit', (code, signal) => {
    service.exit = { code, signal };
    exited?.({ code, signal });
  });
  onSpawn?.(service);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start within ${startTimeoutMs} ms:\n${err}`));
    }, startTimeoutMs);
    const onData = () => {
      const match = /tagtrail listening on (https?:\/\/\S+)/.exec(err);
      if (!match) return;
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      service.url = match[1] as string;
      resolve(service);
    };
    child.stderr?.on('data', onData);
    void exitedPromise.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code ?? signal}) while starting:\n${err}\n${out.slice(-4000)}`));
    });
  });
}

/** The PID in a data directory's postmaster.pid (the embedded PostgreSQL), or null. */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  const text = await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = Number(text?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}
