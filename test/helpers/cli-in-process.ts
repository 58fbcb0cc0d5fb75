import { Command } from 'commander';
import { vi } from 'vitest';
import { registerCommands } from '../../src/cli/commands.js';
import { TEST_SECRET_KEYS } from './secrets.js';

/**
 * Runs `tagtrail …` in this process against the test database; returns what it printed.
 * Quicker than the compiled CLI (helpers/compiled.ts) for commands whose output is the point.
 */
export async function tagtrail(databaseUrl: string, args: string[]): Promise<string> {
  const saved = {
    DATABASE_URL: process.env.DATABASE_URL,
    TAGTRAIL_SECRET_KEYS: process.env.TAGTRAIL_SECRET_KEYS,
  };
  process.env.DATABASE_URL = databaseUrl;
  // The key of the test's services, which sealed the secrets in this database.
  process.env.TAGTRAIL_SECRET_KEYS = TEST_SECRET_KEYS;
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const program = new Command('tagtrail').exitOverride();
    registerCommands(program);
    await program.parseAsync(['node', 'tagtrail', ...args]);
    return out.join('');
  } finally {
    spy.mockRestore();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
