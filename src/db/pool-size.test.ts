import { describe, expect, it } from 'vitest';
import { defaultPoolSize, embeddedMaxConnections } from './pool-size.js';

describe('defaultPoolSize', () => {
  it('is twice the cores and two more, at least 6', () => {
    expect(defaultPoolSize(1)).toBe(6);
    expect(defaultPoolSize(2)).toBe(6);
    expect(defaultPoolSize(4)).toBe(10);
    expect(defaultPoolSize(16)).toBe(34);
  });

  it("counts this machine's cores when not told", () => {
    expect(defaultPoolSize()).toBeGreaterThanOrEqual(6);
  });
});

describe('embeddedMaxConnections', () => {
  it('holds both pools and spare slots, and never less than 200', () => {
    expect(embeddedMaxConnections(6)).toBe(200);
    expect(embeddedMaxConnections(100)).toBe(250);
    expect(embeddedMaxConnections(1000)).toBe(2050);
    // The default pools of a 64-core machine (130 each) fit.
    expect(embeddedMaxConnections(defaultPoolSize(64))).toBeGreaterThan(2 * defaultPoolSize(64));
  });
});
