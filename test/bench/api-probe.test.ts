import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeFigures, probeLoop } from '../../bench/api-probe.js';
import { buildIfStale, ROOT } from '../helpers/compiled.js';

// bench:ingest --probe: the API's answer times while ingest works, asked of /healthz.
describe('bench:ingest API probe', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A /healthz whose every third answer waits `slowMs`; the paths asked, in order. */
  async function healthz(slowMs: number): Promise<{ url: string; paths: string[] }> {
    const paths: string[] = [];
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      const wait = paths.length % 3 === 0 ? slowMs : 0;
      setTimeout(() => res.end('{"status":"ok"}'), wait);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
  }

  it('figures: nearest-rank quantiles of the answers, in tenths of a millisecond', () => {
    const latencies = Array.from({ length: 100 }, (_, i) => i + 1.04);
    expect(probeFigures(latencies.reverse(), 2)).toEqual({
      answered: 100,
      failed: 2,
      p50: 50,
      p90: 90,
      p99: 99,
      max: 100,
    });
    expect(probeFigures([], 3)).toEqual({ answered: 0, failed: 3, p50: 0, p90: 0, p99: 0, max: 0 });
    expect(probeFigures([7.25], 0)).toMatchObject({ p50: 7.3, max: 7.3 });
  });

  it('asks /healthz until stopped, and its slowest answers show', async () => {
    const { url, paths } = await healthz(60);
    const stop = new AbortController();
    let first = 0;
    const figures = probeLoop(url, 5, stop.signal, () => first++);
    while (paths.length < 7) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    const f = await figures;
    expect(first).toBe(1);
    expect(new Set(paths)).toEqual(new Set(['/healthz']));
    expect(f.failed).toBe(0);
    expect(f.answered).toBeGreaterThanOrEqual(6);
    expect(f.max).toBeGreaterThanOrEqual(55);
    expect(f.p50).toBeLessThan(55);
  });

  it('counts requests nobody answers as unanswered, not as answer times', async () => {
    const { url } = await healthz(0);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const stop = new AbortController();
    const figures = probeLoop(url, 5, stop.signal, () => stop.abort());
    const f = await figures;
    expect(f).toMatchObject({ answered: 0, p50: 0, max: 0 });
    expect(f.failed).toBeGreaterThanOrEqual(1);
  });

  describe('in a process of its own (the compiled bench)', () => {
    beforeAll(buildIfStale, 180_000);

    it('starts after its first answer and stops with the figures of every request it made', async () => {
      const { url, paths } = await healthz(40);
      const { startApiProbe } = (await import(
        pathToFileURL(join(ROOT, 'dist/bench/api-probe.js')).href
      )) as typeof import('../../bench/api-probe.js');
      const probe = await startApiProbe(url, 5);
      expect(paths.length).toBeGreaterThanOrEqual(1);
      while (paths.length < 7) await new Promise((r) => setTimeout(r, 10));
      const f = await probe.stop();
      expect(f.failed).toBe(0);
      expect(f.answered).toBe(paths.length);
      expect(f.max).toBeGreaterThanOrEqual(35);
    }, 30_000);
  });
});
