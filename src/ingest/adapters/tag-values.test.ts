import { describe, expect, it } from 'vitest';
import { normalizeTagValue, tagMatchKey } from './index.js';

describe('normalizeTagValue', () => {
  it('upper-cases and drops whitespace, colons and dashes', () => {
    expect(normalizeTagValue('e2:80-11 60\t60\n00')).toBe('E28011606000');
    expect(normalizeTagValue('  300833b2ddd9014000000000 ')).toBe('300833B2DDD9014000000000');
    expect(normalizeTagValue('')).toBe('');
  });
});

describe('tagMatchKey', () => {
  it('ignores case, separators and leading zeros', () => {
    expect(tagMatchKey('00e2-80')).toBe('E280');
    expect(tagMatchKey('E280')).toBe(tagMatchKey('0000e280'));
    expect(tagMatchKey('0123456789')).toBe('123456789');
  });

  it('maps an all-zero value to "0"', () => {
    expect(tagMatchKey('0')).toBe('0');
    expect(tagMatchKey('0000:0000')).toBe('0');
    expect(tagMatchKey('')).toBe('');
  });
});
