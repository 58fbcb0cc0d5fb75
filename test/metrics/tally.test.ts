/**
 * The tallied series (src/metrics/tally.ts) must render what prom-client's own Counter and
 * Histogram render for the same observations: the same lines, the same values (series of
 * one family may come in another order).
 */
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter, TalliedHistogram } from '../../src/metrics/tally.js';
import { Scrape } from '../helpers/prometheus.js';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

/**
 * A scrape's lines in a fixed order: series of a family may come in another order (the
 * tallies group a counter's series by their first label), which Prometheus ignores.
 */
const lines = async (registry: Registry) => (await registry.metrics()).split('\n').sort();

function pair() {
  const own = new Registry();
  const tallied = new Registry();
  const counter = new Counter({
    name: 'c_total',
    help: 'c',
    labelNames: ['family', 'outcome'],
    registers: [own],
  });
  const tallyCounter = new TalliedCounter({
    name: 'c_total',
    help: 'c',
    labelNames: ['family', 'outcome'] as const,
    registers: [tallied],
  });
  const histogram = new Histogram({
    name: 'h_seconds',
    help: 'h',
    labelNames: ['source'],
    buckets: BUCKETS,
    registers: [own],
  });
  const tallyHistogram = new TalliedHistogram({
    name: 'h_seconds',
    help: 'h',
    labelNames: ['source'],
    buckets: BUCKETS,
    registers: [tallied],
  });
  // Several labels, as the HTTP requests' series has them.
  const requests = new Histogram({
    name: 'r_seconds',
    help: 'r',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [own],
  });
  const tallyRequests = new TalliedHistogram({
    name: 'r_seconds',
    help: 'r',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [tallied],
  });
  return {
    own,
    tallied,
    request: (method: string, route: string, status: string, v: number) => {
      requests.observe({ method, route, status }, v);
      tallyRequests.observe([method, route, status], v);
    },
    inc: (family: string, outcome: string, n: number) => {
      counter.inc({ family, outcome }, n);
      tallyCounter.add(family, outcome, n);
    },
    observe: (source: string, v: number) => {
      histogram.observe({ source }, v);
      tallyHistogram.observe(source, v);
    },
  };
}

const family = fc.constantFrom('generic-json', 'impinj-r700', 'handheld');
const label = fc.constantFrom('ingested', 'rejected', 'unknown');
// Values on the bounds too: a value equal to a bound counts in that bound's bucket.
const seconds = fc.oneof(fc.constantFrom(0, ...BUCKETS), fc.double({ min: 0, max: 100, noNaN: true }));

describe('tallied series', () => {
  it('render the same text as prom-client for the same observations, scraped between them too', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({
              kind: fc.constant('inc' as const),
              family,
              outcome: label,
              n: fc.integer({ min: 1, max: 500 }),
            }),
            fc.record({
              kind: fc.constant('observe' as const),
              source: fc.constantFrom('mqtt', 'webhook'),
              v: seconds,
            }),
            fc.record({
              kind: fc.constant('request' as const),
              method: fc.constantFrom('GET', 'POST'),
              route: fc.constantFrom('/api/v1/assets', '/api/v1/assets/:asset_id', '(unmatched)'),
              status: fc.constantFrom('200', '404'),
              v: seconds,
            }),
            fc.record({ kind: fc.constant('scrape' as const) }),
          ),
          { maxLength: 60 },
        ),
        async (steps) => {
          const p = pair();
          for (const step of steps) {
            if (step.kind === 'inc') p.inc(step.family, step.outcome, step.n);
            else if (step.kind === 'observe') p.observe(step.source, step.v);
            else if (step.kind === 'request') p.request(step.method, step.route, step.status, step.v);
            else expect(await lines(p.tallied)).toEqual(await lines(p.own));
          }
          expect(await lines(p.tallied)).toEqual(await lines(p.own));
        },
      ),
    );
  });

  it('are read by a Prometheus text-format parser with exact counts and sums', async () => {
    const p = pair();
    p.inc('generic-json', 'ingested', 3);
    p.inc('generic-json', 'ingested', 4);
    p.inc('handheld', 'unknown', 1);
    p.observe('mqtt', 0.001);
    p.observe('mqtt', 0.5);
    p.observe('webhook', 20);
    p.request('GET', '/api/v1/assets/:asset_id', '200', 0.004);
    p.request('GET', '/api/v1/assets/:asset_id', '200', 0.006);
    p.request('GET', '/api/v1/assets/:asset_id', '404', 0.002);
    const scrape = await Scrape.parse(await p.tallied.metrics());
    expect(scrape.type('c_total')).toBe('counter');
    expect(scrape.value('c_total', { family: 'generic-json', outcome: 'ingested' })).toBe(7);
    expect(scrape.value('c_total', { family: 'handheld', outcome: 'unknown' })).toBe(1);
    expect(scrape.type('h_seconds')).toBe('histogram');
    expect(scrape.histogram('h_seconds', { source: 'mqtt' })).toEqual({ count: 2, sum: 0.501 });
    expect(scrape.histogram('h_seconds', { source: 'webhook' })).toEqual({ count: 1, sum: 20 });
    const got = { method: 'GET', route: '/api/v1/assets/:asset_id' };
    expect(scrape.histogram('r_seconds', { ...got, status: '200' })).toEqual({ count: 2, sum: 0.01 });
    expect(scrape.histogram('r_seconds', { ...got, status: '404' })).toEqual({ count: 1, sum: 0.002 });
    // Counts are handed over, not kept twice: a second scrape reads the same totals.
    const again = await Scrape.parse(await p.tallied.metrics());
    expect(again.value('c_total', { family: 'generic-json', outcome: 'ingested' })).toBe(7);
  });
});
