import { getMetricsFromIterator, type PromHistogramData, type PromMetrics } from 'prom2javascript';
import { expect } from 'vitest';

/** A sample line whose value is NaN or -Inf, in any case. */
const SPECIAL_SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?\s+(?:nan|-inf)(?:\s+-?\d+)?$/i;

/**
 * A scrape parsed by a Prometheus text-format parser (prom2javascript), with lookups by
 * series name and labels. The parser throws on a malformed line; a label set repeated
 * within one family (which Prometheus refuses) fails the test here.
 */
export class Scrape {
  private constructor(readonly families: PromMetrics) {}

  static async parse(text: string): Promise<Scrape> {
    // NaN and -Inf are valid sample values (Prometheus reads them case-insensitively, and
    // prom-client writes `Nan`, e.g. for Node's event-loop lag before its first sample),
    // but this parser refuses them: such samples are kept out of what it reads, never altered.
    const lines = text.split('\n').filter((line) => !SPECIAL_SAMPLE.test(line));
    const families = await getMetricsFromIterator(lines[Symbol.iterator]());
    for (const [name, family] of Object.entries(families)) {
      const keys = family.data.map((d) => JSON.stringify(Object.entries(d.labels).sort()));
      expect(new Set(keys).size, `${name} repeats a label set`).toBe(keys.length);
    }
    return new Scrape(families);
  }

  type(name: string): string | undefined {
    return this.families[name]?.type;
  }

  private find(name: string, labels: Record<string, string>) {
    const family = this.families[name];
    return family?.data.find((d) => Object.entries(labels).every(([k, v]) => d.labels[k] === v));
  }

  /** A counter's or gauge's value; 0 when the series is absent (not yet incremented). */
  value(name: string, labels: Record<string, string> = {}): number {
    const found = this.find(name, labels) as { value?: number } | undefined;
    return found?.value ?? 0;
  }

  has(name: string, labels: Record<string, string> = {}): boolean {
    return this.find(name, labels) !== undefined;
  }

  /** A histogram series' count and sum; zeros when absent. */
  histogram(name: string, labels: Record<string, string> = {}): { count: number; sum: number } {
    const found = this.find(name, labels) as PromHistogramData | undefined;
    return { count: found?.count ?? 0, sum: found?.sum ?? 0 };
  }
}
