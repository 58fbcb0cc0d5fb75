import { InvalidArgumentError } from 'commander';
import { parseRfc3339 } from '../http/timestamps.js';

// The parsers throw commander's InvalidArgumentError, not Error: commander then reports a
// malformed value as the usage error it is (its own message, exit status 2), where an
// ordinary error would pass for a failure of the command (exit 1) though nothing ran.

/** An integer option from `min` to `max`. */
export function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    }
    return Number(value);
  };
}

/** A row id (a PostgreSQL integer key such as an organization's). */
export const id = (name: string) => integer(name, 1, 2147483647);

/** A count with no upper bound here (the service sets its own, with its own message). */
export function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1) {
      throw new InvalidArgumentError(`${name} must be a positive integer`);
    }
    // Beyond what the command takes, a usage error (exit 2) like any other bad argument.
    if (Number(value) > max) throw new InvalidArgumentError(`${name} must be at most ${max}`);
    return Number(value);
  };
}

/** A UUID, such as an API key's id: anything else would only fail in the database. */
export function uuid(name: string) {
  return (value: string): string => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
      throw new InvalidArgumentError(`${name} must be a UUID, e.g. 0b6c3f8e-5d2a-4e1b-9c7d-2f4a6b8c0d1e`);
    }
    return value.toLowerCase();
  };
}

/** One of a few words. */
export function oneOf<T extends string>(name: string, values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${name} must be ${values.join(' or ')}`);
    }
    return value as T;
  };
}

/** An RFC 3339 instant, as the API takes them. */
export function instant(name: string) {
  return (value: string): Date => {
    const ms = parseRfc3339(value);
    if (ms === null) {
      throw new InvalidArgumentError(`${name} must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z`);
    }
    return new Date(ms);
  };
}
