/**
 * Values the Conventions field rules refuse in the fields assets and locations share
 * (src/master-data/fields.ts), each with the field code it gets.
 */

/** Refused names; `sample` is a valid name that the cases vary. */
export function refusedNames(sample: string): [label: string, name: unknown, code: string][] {
  return [
    ['empty', '', 'too_short'],
    ['leading whitespace', ` ${sample}`, 'invalid_value'],
    ['trailing whitespace', `${sample} `, 'invalid_value'],
    ['a newline', `${sample}\nA`, 'invalid_value'],
    ['a tab', `${sample}\tA`, 'invalid_value'],
    ['DEL', `${sample}\u007f`, 'invalid_value'],
    ['NUL', '\u0000', 'invalid_value'],
    ['a leading control character', `\u0001${sample}`, 'invalid_value'],
    ['256 characters', 'n'.repeat(256), 'too_long'],
    ['null', null, 'invalid_value'],
    ['a number', 7, 'invalid_value'],
  ];
}

/** Refused external keys (letters, digits and hyphens, 1 to 255 of them). */
export const REFUSED_EXTERNAL_KEYS: [label: string, key: unknown, code: string][] = [
  ['a space', 'A B', 'invalid_value'],
  ['an underscore', 'A_B', 'invalid_value'],
  ['a comma', 'A,B', 'invalid_value'],
  ['a non-ASCII letter', 'Ä1', 'invalid_value'],
  ['empty', '', 'too_short'],
  ['256 characters', 'K'.repeat(256), 'too_long'],
  ['null', null, 'invalid_value'],
];
