import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Read } from './adapters/types.js';
import { carriesReaderTimes, DEFAULT_CLOCK_POLICY, digestWindowMs, observedAt } from './clock-policy.js';

describe('which messages are one observation', () => {
  const read = (readerTime: number | null): Read => ({
    antenna: 1,
    tagValue: 'E2000000000000000000A001',
    rssi: null,
    readerTime,
  });
  const now = Date.parse('2031-03-15T10:30:00Z');

  it('is one when every read carries a trusted reader time', () => {
    expect(carriesReaderTimes([read(now - 1000), read(now - 60_000)], now, DEFAULT_CLOCK_POLICY)).toBe(true);
    // At the bounds themselves the reader's time is still trusted.
    const { maxFutureSkewMs, maxPastSkewMs } = DEFAULT_CLOCK_POLICY;
    expect(carriesReaderTimes([read(now + maxFutureSkewMs)], now, DEFAULT_CLOCK_POLICY)).toBe(true);
    expect(carriesReaderTimes([read(now - maxPastSkewMs)], now, DEFAULT_CLOCK_POLICY)).toBe(true);
  });

  it('is new each time when any read is placed at our receipt, or there are no reads', () => {
    const { maxFutureSkewMs, maxPastSkewMs } = DEFAULT_CLOCK_POLICY;
    expect(carriesReaderTimes([read(now), read(null)], now, DEFAULT_CLOCK_POLICY)).toBe(false);
    expect(carriesReaderTimes([read(now + maxFutureSkewMs + 1)], now, DEFAULT_CLOCK_POLICY)).toBe(false);
    expect(carriesReaderTimes([read(now - maxPastSkewMs - 1)], now, DEFAULT_CLOCK_POLICY)).toBe(false);
    expect(carriesReaderTimes([], now, DEFAULT_CLOCK_POLICY)).toBe(false);
  });

  it('keeps a digest as long as the same reader times could be trusted again', () => {
    expect(digestWindowMs(DEFAULT_CLOCK_POLICY)).toBe(7 * 24 * 3600_000 + 5 * 60_000);
  });
});

describe('observedAt', () => {
  const policy = DEFAULT_CLOCK_POLICY;
  it('is the reader time within the trusted bounds of our receipt, our receipt otherwise', () => {
    const receivedAt = Date.parse('2031-03-15T10:30:00Z');
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: -2 * policy.maxPastSkewMs, max: 2 * policy.maxFutureSkewMs }), {
          nil: null,
        }),
        (offset) => {
          const readerTime = offset === null ? null : receivedAt + offset;
          const at = observedAt(readerTime, receivedAt, policy);
          const trusted =
            offset !== null && offset >= -policy.maxPastSkewMs && offset <= policy.maxFutureSkewMs;
          expect(at).toBe(trusted ? readerTime : receivedAt);
        },
      ),
    );
  });
});
