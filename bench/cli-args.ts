import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * The arguments of a benchmark, with `--help` (the usage on standard output, exit 0) and a
 * line naming the mistake above the usage on standard error (exit 2) for an unknown option
 * or a missing value: without it `--help` and every mistyped option ended in a stack trace
 * of node's ERR_PARSE_ARGS_UNKNOWN_OPTION.
 */
export function benchArgs<T extends ParseArgsConfig>(
  usage: string,
  config: T,
  argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<T>> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage.trimEnd()}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ ...config, args: argv } as T);
  } catch (error) {
    return usageError((error as Error).message, usage);
  }
}

/**
 * A numeric option's value, checked: `Number('ten')` made NaN, and a run that seeded NaN
 * assets or loaded for NaN seconds failed minutes later far from the mistake.
 */
export function positiveInteger(name: string, value: string | undefined, usage: string): number {
  const n = Number(value);
  if (Number.isInteger(n) && n >= 1) return n;
  return usageError(`--${name} must be a positive whole number, not ${JSON.stringify(value)}`, usage);
}

/** A mistake in the arguments, named above the usage on standard error; exit 2. */
export function usageError(message: string, usage: string): never {
  process.stderr.write(`${message}\n\n${usage.trimEnd()}\n`);
  process.exit(2);
}
