import { describe, expect, it } from 'vitest';
import { buildCoercer } from './coerce.js';

describe('buildCoercer', () => {
  const coerce = buildCoercer({
    properties: {
      limit: { type: 'integer' },
      include_deleted: { type: 'boolean' },
      location_id: { type: 'array', items: { type: 'integer' } },
      q: { type: 'string' },
    },
  })!;

  it('converts decimal integers and exact booleans only', () => {
    expect(coerce({ limit: '10', include_deleted: 'true' })).toEqual({ limit: 10, include_deleted: true });
    expect(coerce({ limit: '0x10', include_deleted: '1' })).toEqual({ limit: '0x10', include_deleted: '1' });
    expect(coerce({ limit: ' 5', include_deleted: 'TRUE' })).toEqual({
      limit: ' 5',
      include_deleted: 'TRUE',
    });
    expect(coerce({ limit: '1e3' })).toEqual({ limit: '1e3' });
  });

  it('makes repeatable parameters arrays and takes the first of a repeated scalar', () => {
    expect(coerce({ location_id: '3' })).toEqual({ location_id: [3] });
    expect(coerce({ location_id: ['3', 'x'] })).toEqual({ location_id: [3, 'x'] });
    expect(coerce({ q: ['first', 'second'] })).toEqual({ q: 'first' });
  });

  it('leaves unknown keys for the validator to report', () => {
    expect(coerce({ bogus: '1' })).toEqual({ bogus: '1' });
  });

  it('keeps a __proto__ key as a property, never as the prototype', () => {
    const input = JSON.parse('{"__proto__": ["a", "b"], "limit": "2"}') as Record<string, unknown>;
    const out = coerce(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'limit']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual(['a', 'b']);
    expect((out as { sort?: unknown }).sort).toBeUndefined();
  });
});
