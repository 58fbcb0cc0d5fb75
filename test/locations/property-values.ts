/**
 * Generated values for the locations property tests (properties.test.ts): valid names, keys,
 * descriptions and RFC 3339 instants, junk of every JSON type, and "mostly valid, sometimes
 * junk" mixes of them, so generated bodies are accepted often enough to test both paths.
 */
import fc from 'fast-check';

// biome-ignore lint/suspicious/noControlCharactersInRegex: the spec's name pattern
const NAME_RE = /^\S(?:[^\x00-\x1F\x7F]*\S)?$/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control characters
const CONTROL = /[\x00-\x1F\x7F]/;

export const validName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((s) => NAME_RE.test(s) && !CONTROL.test(s) && [...s].length <= 255);
export const validKey = fc.stringMatching(/^[A-Za-z0-9-]{1,40}$/);
export const validDescription = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control characters
  .filter((s) => !/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/.test(s) && [...s].length <= 1024);

/** An instant in 1971..2999 written as RFC 3339 with any offset and 0-9 fractional digits. */
export const validInstant = fc
  .record({
    millis: fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2999, 0, 1) }),
    offsetMinutes: fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
    digits: fc.integer({ min: 0, max: 9 }),
    extra: fc.integer({ min: 0, max: 999999 }),
    zulu: fc.constantFrom('Z', 'z', '+00:00'),
  })
  .map(({ millis, offsetMinutes, digits, extra, zulu }) => {
    const local = new Date(millis + offsetMinutes * 60000).toISOString().slice(0, 19);
    const fraction = `${String(millis % 1000).padStart(3, '0')}${String(extra).padStart(6, '0')}`.slice(
      0,
      digits,
    );
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    const offset =
      offsetMinutes === 0
        ? zulu
        : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    return `${local}${digits > 0 ? `.${fraction}` : ''}${offset}`;
  });

export const junk = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\nb',
    '😀',
    'x'.repeat(256),
    '2147483648',
    '%',
    "'; DROP TABLE locations;--",
  ),
);

/** Mostly a valid value, sometimes junk: so that generated bodies are valid often enough. */
export const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown> = junk) =>
  fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: invalid, weight: 1 });

export const anyName = mostly(validName);
export const anyKey = mostly(validKey);
export const anyDescription = mostly(fc.oneof(validDescription, fc.constant(null)));
export const anyInstant = mostly(
  validInstant,
  fc.oneof(
    fc.constantFrom(
      '0001-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59-23:59',
      '2024-02-30T00:00:00Z',
      '2024-01-01',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:00:60Z',
    ),
    junk,
  ),
);
/** A parent id: mostly one of `known` (existing locations) or null, sometimes out of range or junk. */
export const anyId = (known: number[]) =>
  mostly(
    fc.constantFrom(...known, null),
    fc.oneof(fc.constantFrom(2147483647, 2147483648, 0, -1, 1.5), fc.integer(), junk),
  );
/** A parent key: mostly one of `known` or null, sometimes a wrong-case or missing key, or junk. */
export const anyParentKey = (known: string[]) =>
  mostly(fc.constantFrom(...known, null), fc.oneof(fc.constantFrom('prop-root', 'NO-SUCH'), validKey, junk));
export const anyTags = fc.oneof(
  { arbitrary: fc.constant(null), weight: 3 },
  { arbitrary: fc.constant([]), weight: 3 },
  fc.array(
    fc.record(
      {
        tag_type: fc.oneof(fc.constantFrom('rfid', 'ble', 'barcode', 'nfc'), junk),
        value: fc.oneof(validKey, junk),
        id: fc.integer(),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
  junk,
);
/** Now and then (one in eight) an extra value; otherwise null. */
export const sometimes = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 7 }, { arbitrary: arb, weight: 1 });
export const unknownKeys = fc.record(
  { metadata: fc.object(), depth: fc.integer(), tree_path: fc.string() },
  { requiredKeys: [] },
);
