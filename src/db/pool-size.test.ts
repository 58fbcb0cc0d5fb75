import { describe, expect, it } from 'vitest';
import { defaultPoolSize } from './pool-size.js';

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
