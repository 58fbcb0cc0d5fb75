/**
 * Thrown by field readers; caught per item, so one bad item becomes one error message. Not an
 * Error subclass: hostile payloads can fail hundreds of thousands of items, and capturing a stack
 * trace for each would dominate the cost.
 */
export class ItemError {
  constructor(readonly message: string) {}
}

export function fail(message: string): never {
  throw new ItemError(message);
}

/** A short, printable rendering of an offending value for error messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  const text =
    typeof value === 'string'
      ? JSON.stringify(value.length > 60 ? value.slice(0, 60) : value)
      : String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
