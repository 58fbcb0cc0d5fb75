import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Whether `path` is a directory now; false when it is anything else or nothing. */
const isDirectory = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/**
 * `mkdir(path, { recursive: true })` for paths a person gives (TAGTRAIL_DATA_DIR, --out):
 * Node 20's recursive mkdir never returns for a path whose parent exists but refuses new
 * entries with ENOENT (anything under /proc), which held the start with no word and past
 * SIGTERM. Here such a path fails with that ENOENT. Returns the first directory it created,
 * as the recursive mkdir does (undefined when the whole path was there).
 */
export async function makeDirectories(path: string, mode?: number): Promise<string | undefined> {
  const target = resolve(path);
  try {
    await mkdir(target, { mode });
    return target;
  } catch (err) {
    if (codeOf(err) === 'EEXIST' && (await isDirectory(target))) return undefined;
    const parent = dirname(target);
    if (codeOf(err) !== 'ENOENT' || parent === target) throw err;
    const first = await makeDirectories(parent, mode);
    try {
      await mkdir(target, { mode });
    } catch (again) {
      // Made meanwhile by another process: there, as asked.
      if (codeOf(again) !== 'EEXIST' || !(await isDirectory(target))) throw again;
    }
    return first ?? target;
  }
}

/**
 * makeDirectories for the data directory, failing with a message that names the setting:
 * `serve` on an unusable TAGTRAIL_DATA_DIR stopped with only mkdir's errno line
 * (`ENOENT: no such file or directory, mkdir '/proc/x'`), which says nothing of where the
 * path came from.
 */
export async function makeDataDirectory(dataDir: string): Promise<string | undefined> {
  try {
    return await makeDirectories(dataDir);
  } catch (err) {
    throw new Error(
      `cannot make the data directory ${resolve(dataDir)} (TAGTRAIL_DATA_DIR): ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
