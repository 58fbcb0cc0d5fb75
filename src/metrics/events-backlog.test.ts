import { describe, expect, it } from 'vitest';
import { ServiceMetrics } from './index.js';

const sample = (text: string, name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];

describe('the event backlog gauges', () => {
  it('reports what the read found, both series from one read', async () => {
    const metrics = new ServiceMetrics({ processMetrics: false });
    let reads = 0;
    metrics.watchEvents(async () => {
      reads++;
      return { queued: 7, oldestSeconds: 1.5 };
    });
    const text = await metrics.registry.metrics();
    expect(sample(text, 'tagtrail_events_undispatched')).toBe('7');
    expect(sample(text, 'tagtrail_events_undispatched_oldest_seconds')).toBe('1.5');
    expect(reads).toBe(1);
  });

  it('is NaN, not 0, when the database fails or does not answer within 2 s', async () => {
    const failing = new ServiceMetrics({ processMetrics: false });
    failing.watchEvents(() => Promise.reject(new Error('connection refused')));
    // prom-client writes NaN as `Nan`; Prometheus reads it either way.
    expect(sample(await failing.registry.metrics(), 'tagtrail_events_undispatched')).toMatch(/^nan$/i);

    const silent = new ServiceMetrics({ processMetrics: false });
    silent.watchEvents(() => new Promise(() => undefined));
    // The scrape answers (the read's 2 s bound) instead of waiting for the database.
    const text = await silent.registry.metrics();
    expect(sample(text, 'tagtrail_events_undispatched_oldest_seconds')).toMatch(/^nan$/i);
  });
});
