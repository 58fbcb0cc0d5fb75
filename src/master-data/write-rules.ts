import { type ApiError, fieldError } from '../errors.js';
import { parseRfc3339, toWire } from '../http/timestamps.js';

/**
 * Write rules shared by assets and locations that the JSON schemas cannot express: the
 * inbound instant as stored, and the validity window. (Instants outside the years
 * 0001-9999 and strings with unpaired surrogates are refused before, by the timestamp
 * format and the body decoder.)
 */

/** Epoch milliseconds of a schema-valid inbound timestamp (sub-ms digits dropped). */
export function millisIn(field: string, text: string): number {
  const millis = parseRfc3339(text);
  if (millis === null) throw fieldError(field, 'invalid_value', `${field} must be an RFC 3339 timestamp`);
  return millis;
}

/** A schema-valid inbound timestamp as the wire form of its instant (sub-ms digits dropped). */
export function instantIn(field: string, text: string): string {
  return toWire(millisIn(field, text));
}

/** `valid_to` <= `valid_from` (API-SPEC "Liveness axes"): invalid_value on valid_to. */
export function windowError(validFrom: string | null): ApiError {
  return fieldError('valid_to', 'invalid_value', 'valid_to must be later than valid_from', {
    ...(validFrom ? { valid_from: validFrom } : {}),
  });
}

/** Both in wire form; an open window (null) always passes. */
export function checkWindow(validFrom: string, validTo: string | null): void {
  if (validTo !== null && Date.parse(validTo) <= Date.parse(validFrom)) throw windowError(validFrom);
}
