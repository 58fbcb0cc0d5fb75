/**
 * Checks of JSON text that JSON.parse lets through but storage would not keep as sent:
 * integers beyond int64 (rounded by the parse) and lone UTF-16 surrogates (refused by
 * PostgreSQL's jsonb). Neutral ground for the two places that take JSON text from outside:
 * the API's body decoder (src/http/json-body.ts) and the spreadsheet import's metadata
 * cells (src/spreadsheet/columns.ts), so a cell is refused for exactly what a body is.
 */

/** What each check finds, worded to follow the name of what holds it ("Request body", "metadata"). */
export const UNPAIRED_SURROGATE = 'contains a string that is not valid Unicode (an unpaired surrogate)';
export const INTEGER_BEYOND_INT64 = 'contains an integer outside the 64-bit range the decoder accepts';

const INT64_MAX = '9223372036854775807';
const INT64_MIN_ABS = '9223372036854775808';

/**
 * Calls `visit` with the bounds of each number literal of JSON text (strings skipped), and
 * whether it is an integer (no fraction, no exponent); stops when `visit` returns true, and
 * returns whether it did. A fraction's or an exponent's digits belong to their literal: read
 * apart, the 20 digits of 0.12345678901234567890 would be an integer beyond int64.
 */
function someNumber(text: string, visit: (start: number, end: number, integer: boolean) => boolean): boolean {
  const digitAt = (i: number) => {
    const c = text.charCodeAt(i);
    return c >= 48 && c <= 57;
  };
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c === 45 /* - */ || digitAt(i)) {
      const start = i;
      if (c === 45) i++;
      while (digitAt(i)) i++;
      let integer = true;
      if (text[i] === '.') {
        integer = false;
        i++;
        while (digitAt(i)) i++;
      }
      if (text[i] === 'e' || text[i] === 'E') {
        integer = false;
        i++;
        if (text[i] === '+' || text[i] === '-') i++;
        while (digitAt(i)) i++;
      }
      if (visit(start, i, integer)) return true;
      i--;
    }
  }
  return false;
}

/**
 * True when the JSON text holds an integer literal outside the int64 range. JSON.parse
 * would silently round such a value, so it is found in the text before parsing.
 */
export function hasIntegerBeyondInt64(text: string): boolean {
  return someNumber(text, (start, end, integer) => {
    if (!integer) return false;
    const negative = text.charCodeAt(start) === 45;
    const digits = text.slice(negative ? start + 1 : start, end).replace(/^0+(?=\d)/, '');
    const limit = negative ? INT64_MIN_ABS : INT64_MAX;
    return digits.length > limit.length || (digits.length === limit.length && digits > limit);
  });
}

/**
 * False when any string or key holds a lone UTF-16 surrogate, which storage would mangle.
 * Walks with a stack, not recursion: a body may nest deeper than the call stack allows
 * (JSON.parse does not mind), and that must end in a 400, not a stack overflow.
 */
export function allStringsWellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return false;
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else if (node && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (!key.isWellFormed()) return false;
        stack.push(child);
      }
    }
  }
  return true;
}
