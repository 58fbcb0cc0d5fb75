/**
 * The ingest commands of the CLI run in-process (the same commander program as
 * `tagtrail`), capturing what they print and the exit status they set.
 */
import { Command } from 'commander';
import { vi } from 'vitest';
import { registerIngestCommands } from '../../src/cli/ingest-commands.js';

/**
 * Runs `tagtrail <args>` and returns what it wrote to standard output and standard error,
 * and the exit status it set (0 when none); `tty`: as if standard error were a terminal.
 */
export async function tagtrail(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return tagtrailOn({ tty: false }, ...args);
}

export async function tagtrailOn(
  { tty }: { tty: boolean },
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  const program = new Command('tagtrail').exitOverride();
  registerIngestCommands(program);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  const wasTty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
  Object.defineProperty(process.stderr, 'isTTY', { value: tty, configurable: true });
  let code: number;
  try {
    await program.parseAsync(['node', 'tagtrail', ...args]);
  } finally {
    code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    out.mockRestore();
    err.mockRestore();
    if (wasTty) Object.defineProperty(process.stderr, 'isTTY', wasTty);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  }
  return { stdout, stderr, code };
}
