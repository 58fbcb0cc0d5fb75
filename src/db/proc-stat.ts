import { readFileSync } from 'node:fs';

/**
 * The fields of `/proc/<pid>/stat` after the command name, which is in parentheses and may
 * hold spaces and parentheses itself, so fields are counted after its last `)`: [0] the
 * state (`Z` a zombie), [1] the parent's pid, [19] the start time in clock ticks since boot.
 * Undefined off Linux or for a process that is gone.
 */
export function procStatFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
