import { describe, expect, it } from 'vitest';
import { normalizeTagValue } from './index.js';

describe('normalizeTagValue', () => {
  it('upper-cases and drops whitespace, colons and dashes', () => {
    expect(normalizeTagValue('e2:80-11 60\t60\n00')).toBe('E28011606000');
    expect(normalizeTagValue('  300833b2ddd9014000000000 ')).toBe('300833B2DDD9014000000000');
    expect(normalizeTagValue('')).toBe('');
  });
});
