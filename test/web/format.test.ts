import { describe, expect, it } from 'vitest';
import { describeStay, formatDateTime, formatDuration } from '../../web/src/format.js';

describe('web app duration formatting', () => {
  it('formats durations with the two largest units', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(3600 + 5 * 60 + 9)).toBe('1 h 5 min');
    expect(formatDuration(3 * 86400 + 4 * 3600)).toBe('3 d 4 h');
    expect(formatDuration(86400 + 30)).toBe('1 d');
  });

  it('a past stay lasted until the next arrival', () => {
    const stay = { event_observed_at: '2026-01-01T08:00:00.000Z', duration_seconds: 7200, current: false };
    expect(describeStay(stay, new Date('2026-03-01T00:00:00Z'))).toBe('for 2 h');
  });

  it('the current stay seen once is not "0 s": it runs since the arrival, up to now', () => {
    const arrived = '2026-01-01T08:00:00.000Z';
    const stay = { event_observed_at: arrived, duration_seconds: 0, current: true };
    const text = describeStay(stay, new Date('2026-01-01T10:30:00Z'));
    expect(text).toBe(`since ${formatDateTime(arrived)} · 2 h 30 min so far`);
    expect(text).not.toContain('0 s');
    // Seen a moment ago: arrived, with no meaningless "0 s".
    expect(describeStay(stay, new Date('2026-01-01T08:00:10Z'))).toBe(
      `since ${formatDateTime(arrived)} · just arrived`,
    );
    // A clock behind the server's does not make a negative duration.
    expect(describeStay(stay, new Date('2026-01-01T07:00:00Z'))).toBe(
      `since ${formatDateTime(arrived)} · just arrived`,
    );
  });

  it('the current stay ignores the API duration, which stops at the last sighting', () => {
    const stay = { event_observed_at: '2026-01-01T08:00:00.000Z', duration_seconds: 60, current: true };
    expect(describeStay(stay, new Date('2026-01-02T09:00:00Z'))).toMatch(/· 1 d 1 h so far$/);
  });
});

describe('formatDateTime', () => {
  it("names the time zone the time is shown in (the browser's own)", () => {
    const iso = '2026-12-04T10:15:00Z';
    const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
      .formatToParts(new Date(iso))
      .find((p) => p.type === 'timeZoneName')?.value;
    expect(zone).toBeTruthy();
    expect(formatDateTime(iso).endsWith(` ${zone}`)).toBe(true);
  });

  it('leaves what is not a time as it is, and an empty one as the placeholder', () => {
    expect(formatDateTime('soon')).toBe('soon');
    expect(formatDateTime(null)).toBe('—');
  });
});
