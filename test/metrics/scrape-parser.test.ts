/** The scrape parser of the metrics tests: it must refuse what Prometheus refuses and take what it takes. */
import { describe, expect, it } from 'vitest';
import { Scrape } from '../helpers/prometheus.js';

describe('Scrape.parse', () => {
  it('takes NaN and -Inf samples (as prom-client writes them) without reading them as values', async () => {
    const scrape = await Scrape.parse(
      [
        '# HELP lag_seconds Lag',
        '# TYPE lag_seconds gauge',
        'lag_seconds Nan',
        '# TYPE low gauge',
        'low{a="x"} -Inf',
        '# TYPE c_total counter',
        'c_total{k="v"} 4',
      ].join('\n'),
    );
    expect(scrape.value('c_total', { k: 'v' })).toBe(4);
    expect(scrape.has('lag_seconds')).toBe(false);
  });

  it('refuses a malformed sample and a label set repeated within a family', async () => {
    await expect(Scrape.parse('c_total{k="v" 4')).rejects.toThrow();
    await expect(Scrape.parse('# TYPE c_total counter\nc_total{k="v"} 1\nc_total{k="v"} 2')).rejects.toThrow(
      /repeats a label set/,
    );
  });
});
