import { badRequest } from '../errors.js';
import {
  allStringsWellFormed,
  hasIntegerBeyondInt64,
  INTEGER_BEYOND_INT64,
  UNPAIRED_SURROGATE,
} from '../json-checks.js';

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
  return value;
}
