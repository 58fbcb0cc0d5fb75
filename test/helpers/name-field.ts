/**
 * Names the Conventions field rules refuse (src/master-data/fields.ts, NameField, which
 * assets and locations share), each with the field code it gets; `sample` is a valid name
 * that the cases vary.
 */
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
