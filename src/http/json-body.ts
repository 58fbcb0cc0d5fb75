import { isUtf8 } from 'node:buffer';
import { badRequest } from '../errors.js';
import {
  allStringsWellFormed,
  hasIntegerBeyondInt64,
  INTEGER_BEYOND_INT64,
  noteInexactNumbers,
  UNPAIRED_SURROGATE,
} from '../json-checks.js';

/**
 * Decodes a request body's bytes. JSON is UTF-8 (RFC 8259 8.1): bytes that are not would be
 * read as U+FFFD and stored in place of what the client sent, so they are refused whole, as
 * the spreadsheet import refuses such a row (docs/import-export.md `invalid_encoding`).
 */
export function decodeJsonBytes(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw badRequest('Request body is not valid UTF-8');
  return decodeJsonBody(bytes.toString('utf8'));
}

/** Decodes a request body: invalid JSON and out-of-range integers are `bad_request`. */
export function decodeJsonBody(text: string): unknown {
  if (text.trim() === '') throw badRequest('Request body must be a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!allStringsWellFormed(value)) {
    throw badRequest(`Request body ${UNPAIRED_SURROGATE}`);
  }
  if (hasIntegerBeyondInt64(text)) {
    throw badRequest(`Request body ${INTEGER_BEYOND_INT64}`);
  }
  noteInexactNumbers(text, value);
  return value;
}
