import { describe, expect, it } from 'vitest';
import { settingsWarnings } from './server-settings.js';

describe('settingsWarnings', () => {
  it('has nothing to say about a server with autovacuum on', () => {
    expect(settingsWarnings({ autovacuum: 'on', trackCounts: 'on' })).toEqual([]);
  });

  it('names autovacuum when it is off', () => {
    const warnings = settingsWarnings({ autovacuum: 'off', trackCounts: 'on' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/autovacuum is off.*set autovacuum = on/);
  });

  it('names track_counts, without which autovacuum cannot run whatever its setting', () => {
    for (const autovacuum of ['on', 'off']) {
      const warnings = settingsWarnings({ autovacuum, trackCounts: 'off' });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/track_counts is off.*set track_counts = on/);
    }
  });
});
