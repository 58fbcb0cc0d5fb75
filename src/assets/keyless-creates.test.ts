import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keylessCreatesInFlight } from './service.js';

// Keyless creates wait on the organization's keyspace lock holding a pooled connection: too
// many in flight take the connections its reads and its readers' messages need.
describe('keyless creates let into the database at once', () => {
  it('is half the pool, at least two', () => {
    expect(keylessCreatesInFlight(6)).toBe(3);
    expect(keylessCreatesInFlight(10)).toBe(5);
    expect(keylessCreatesInFlight(20)).toBe(10);
    expect(keylessCreatesInFlight(1)).toBe(2);
  });

  it('leaves at least half of any pool of four or more to other work', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 1000 }), (pool) => {
        const inFlight = keylessCreatesInFlight(pool);
        expect(inFlight).toBeGreaterThanOrEqual(2);
        expect(inFlight).toBeLessThanOrEqual(pool / 2);
      }),
    );
  });
});
