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

/** A number literal's decimal value as sign, significant digits and exponent; null if not a literal. */
function decimalValue(literal: string): string | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return null;
  const fraction = m[3] ?? '';
  const all = m[2]! + fraction;
  const first = all.search(/[1-9]/);
  if (first < 0) return '0';
  const digits = all.slice(first).replace(/0+$/, '');
  const exponent = Number(m[4] ?? 0) - fraction.length + (all.length - first - digits.length);
  return `${m[1]}${digits}e${exponent}`;
}

/**
 * Whether a number literal survives the trip to storage: JSON.parse makes it a double and
 * JSON.stringify prints that double into the jsonb, which keeps decimals exactly. Past a
 * double's 15 to 17 significant digits or its range the printed number is another one
 * (9007199254740993 becomes ...992, 2^60 written out ends in 000, 1e-400 becomes 0). A
 * literal of at most 15 characters and no exponent always survives.
 */
export function heldExactly(literal: string): boolean {
  if (literal.length <= 15 && !/[eE]/.test(literal)) return true;
  return decimalValue(literal) === decimalValue(String(Number(literal)));
}

/** Per object or array of a decoded body: its keys (indexes as text) holding a number not held exactly, with the literal sent. */
const inexactNumbers = new WeakMap<object, Map<string, string>>();

/** The literal sent for `container[key]` when JSON.parse could not hold it exactly, else undefined. */
export function inexactLiteral(container: object, key: string): string | undefined {
  return inexactNumbers.get(container)?.get(key);
}

interface Frame {
  node: unknown;
  array: boolean;
  /** The key whose value comes next (objects); undefined until the key is read. */
  key: string | undefined;
  index: number;
}

/**
 * Notes, for inexactLiteral, each number of `value` (JSON.parse(text)) that JSON.parse did not
 * hold exactly, so a rule that stores numbers as sent (asset metadata) can refuse them where
 * they are. Only when the text has such a number does it walk the text beside the value; a
 * key sent twice is the last one's, as in JSON.parse.
 */
export function noteInexactNumbers(text: string, value: unknown): void {
  if (!someNumber(text, (start, end) => !heldExactly(text.slice(start, end)))) return;
  const frames: Frame[] = [];
  const slot = (): [object, string] | null => {
    const top = frames.at(-1);
    if (!top || top.node === null || typeof top.node !== 'object') return null;
    return [top.node, top.array ? String(top.index) : (top.key ?? '')];
  };
  const note = (literal: string | undefined) => {
    const at = slot();
    if (!at) return;
    const [node, key] = at;
    const keys = inexactNumbers.get(node);
    if (literal === undefined) keys?.delete(key);
    else if (keys) keys.set(key, literal);
    else inexactNumbers.set(node, new Map([[key, literal]]));
  };
  const child = (): unknown => {
    if (frames.length === 0) return value;
    const at = slot();
    return at && Object.hasOwn(at[0], at[1]) ? (at[0] as Record<string, unknown>)[at[1]] : undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '{' || c === '[') {
      const node = child();
      note(undefined);
      frames.push({ node, array: c === '[', key: undefined, index: 0 });
    } else if (c === '}' || c === ']') {
      frames.pop();
    } else if (c === ',') {
      const top = frames.at(-1)!;
      if (top.array) top.index++;
      else top.key = undefined;
    } else if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const top = frames.at(-1);
      if (top && !top.array && top.key === undefined)
        top.key = JSON.parse(text.slice(start, i + 1)) as string;
      else note(undefined);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let end = i + 1;
      while (end < text.length && /[\d.eE+-]/.test(text[end]!)) end++;
      const literal = text.slice(i, end);
      note(heldExactly(literal) ? undefined : literal);
      i = end - 1;
    } else if (c === 't' || c === 'f' || c === 'n') {
      note(undefined);
      i += c === 'f' ? 4 : 3;
    }
  }
}
