/**
 * The first number in JSON text that JSON.parse would turn into another one (past a
 * double's 15 to 17 significant digits or its range), or undefined. The API refuses such
 * a number in metadata (docs/master-data.md), but the form parses its rows here, so the
 * rounding would happen in the browser and reach the server as a different, valid number;
 * the form says so instead. The same rule as the server's heldExactly (src/json-checks.ts).
 */
export function roundedNumber(text: string): string | undefined {
  const literals = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g);
  return literals?.find((literal) => !heldExactly(literal));
}

function heldExactly(literal: string): boolean {
  if (literal.length <= 15 && !/[eE]/.test(literal)) return true;
  return decimalValue(literal) === decimalValue(String(Number(literal)));
}

/** A literal's value as sign, significant digits and exponent, comparable as text. */
function decimalValue(literal: string): string | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return null;
  const fraction = m[3] ?? '';
  const all = (m[2] ?? '') + fraction;
  const first = all.search(/[1-9]/);
  if (first < 0) return '0';
  const digits = all.slice(first).replace(/0+$/, '');
  const exponent = Number(m[4] ?? 0) - fraction.length + (all.length - first - digits.length);
  return `${m[1]}${digits}e${exponent}`;
}
