import { describe, expect, it } from 'vitest';
import { BroadPatterns } from './repository-search.js';

describe('BroadPatterns', () => {
  it('remembers a pattern per organization until it expires', () => {
    let now = 0;
    const broad = new BroadPatterns(10, 1000, () => now);
    broad.add(1, '%ab1%');
    expect(broad.has(1, '%ab1%')).toBe(true);
    expect(broad.has(2, '%ab1%')).toBe(false);
    expect(broad.has(1, '%ab2%')).toBe(false);
    now = 1000;
    expect(broad.has(1, '%ab1%')).toBe(true);
    now = 1001;
    expect(broad.has(1, '%ab1%')).toBe(false);
  });

  it('forgets the oldest beyond its size; adding again makes a pattern the newest', () => {
    const broad = new BroadPatterns(2);
    broad.add(1, 'a');
    broad.add(1, 'b');
    broad.add(1, 'a');
    broad.add(1, 'c');
    expect(broad.has(1, 'a')).toBe(true);
    expect(broad.has(1, 'b')).toBe(false);
    expect(broad.has(1, 'c')).toBe(true);
  });
});
