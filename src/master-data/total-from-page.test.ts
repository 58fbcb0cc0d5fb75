import { describe, expect, it } from 'vitest';
import { totalFromPage } from './list-query.js';

describe('totalFromPage', () => {
  it('a short page is the last one and tells the total', () => {
    expect(totalFromPage(3, { limit: 50, offset: 0 })).toBe(3);
    expect(totalFromPage(49, { limit: 50, offset: 100 })).toBe(149);
    expect(totalFromPage(0, { limit: 50, offset: 0 })).toBe(0);
  });

  it('a full page, or an empty one past the end, needs the count', () => {
    expect(totalFromPage(50, { limit: 50, offset: 0 })).toBeUndefined();
    expect(totalFromPage(50, { limit: 50, offset: 50 })).toBeUndefined();
    expect(totalFromPage(0, { limit: 50, offset: 50 })).toBeUndefined();
  });
});
