/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/ (docs/metrics.md, "A
 * dashboard and alert rules"): every query parses as PromQL, selects only series and labels
 * the service exposes, takes rate() only of what only grows, and the files say what the
 * two tables of docs/metrics.md say, row for row.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ServiceMetrics } from '../../src/metrics/index.js';
import { type PromqlUse, promqlUse } from './promql.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const METRICS_DOC = read('docs/metrics.md');

interface Series {
  type: string;
  labels: string[];
}

/** Every series a fully wired service can expose, by name, as its registry declares them. */
function catalogue(): Map<string, Series> {
  const metrics = new ServiceMetrics({ processMetrics: true });
  metrics.watchPool({ totalCount: 0, idleCount: 0, waitingCount: 0 });
  metrics.watchTransactionRetries(() => 0);
  metrics.watchBroker(() => 0);
  metrics.watchConsumer(() => true);
  metrics.describeBuild({ version: '0', schema: '0' });
  metrics.watchCertificates(() => []);
  metrics.watchEvents(async () => ({ queued: 0, oldestSeconds: 0 }));
  const series = new Map<string, Series>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, labelNames } = metric as unknown as { name: string; labelNames: string[] };
    const histogram = /Histogram/.test(metric.constructor.name);
    if (!histogram) {
      series.set(name, {
        type: /Counter/.test(metric.constructor.name) ? 'counter' : 'gauge',
        labels: labelNames,
      });
      continue;
    }
    series.set(`${name}_bucket`, { type: 'histogram part', labels: [...labelNames, 'le'] });
    series.set(`${name}_sum`, { type: 'histogram part', labels: labelNames });
    series.set(`${name}_count`, { type: 'histogram part', labels: labelNames });
  }
  // Prometheus' own, for every target it scrapes.
  series.set('up', { type: 'gauge', labels: [] });
  return series;
}

const SERIES = catalogue();
/** Labels Prometheus adds to every series of a target. */
const TARGET_LABELS = ['job', 'instance'];
/** Functions of a range that only make sense of a series that only grows (or resets to 0). */
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);

/** What is wrong with a query: empty when it parses and uses only what the service exposes. */
function problems(expr: string): string[] {
  const use: PromqlUse = promqlUse(expr);
  const found = use.errors.map((e) => `does not parse: ${e}`);
  const labels = new Set(TARGET_LABELS);
  for (const s of use.selections) {
    const series = SERIES.get(s.name);
    if (!series) {
      found.push(`no series ${s.name}`);
      continue;
    }
    for (const label of series.labels) labels.add(label);
    for (const label of s.labels) {
      if (![...TARGET_LABELS, ...series.labels].includes(label))
        found.push(`${s.name} has no label ${label}`);
    }
    if (s.rangeFunction && COUNTER_FUNCTIONS.has(s.rangeFunction) && series.type === 'gauge') {
      found.push(`${s.rangeFunction}() of the gauge ${s.name}`);
    }
  }
  if (use.selections.length === 0) found.push('selects no series');
  for (const label of use.grouping)
    if (!labels.has(label)) found.push(`groups by ${label}, which nothing has`);
  return found;
}

/** The rows of the first table under `heading` in docs/metrics.md, as their cells. */
function docTable(heading: string): string[][] {
  const lines = METRICS_DOC.split(`\n${heading}\n`)[1]!.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  return lines.slice(start + 2, end).map((row) =>
    row
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );
}

/** A cell's first code span: the query or name before any remark in parentheses. */
const codeOf = (cell: string) => /^`([^`]+)`/.exec(cell)?.[1] ?? '';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: Array<{ expr: string; refId: string; datasource?: { uid: string } }>;
}

const dashboard = JSON.parse(read('deploy/grafana/tagtrail.json')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
};
const charts = dashboard.panels.filter((p) => p.type !== 'row');
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, written as Grafana reads it
const CHOSEN_DATASOURCE = '${datasource}';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string };
}
const rules = (
  parseYaml(read('deploy/prometheus/tagtrail-alerts.yml')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((g) => g.rules);

describe('the PromQL check itself', () => {
  it('finds what a query gets wrong', () => {
    expect(problems('sum(rate(tagtrail_ingest_reads_total[5m]))')).toEqual([]);
    expect(problems('sum(rate(tagtrail_ingest_reads_total[5m])')).toEqual([
      expect.stringMatching(/^does not parse/),
    ]);
    expect(problems('rate(tagtrail_ingest_read_total[5m])')).toEqual([
      'no series tagtrail_ingest_read_total',
    ]);
    expect(problems('tagtrail_ingest_reads_total{source="mqtt"}')).toEqual([
      'tagtrail_ingest_reads_total has no label source',
    ]);
    expect(problems('rate(tagtrail_http_open_streams[5m])')).toEqual([
      'rate() of the gauge tagtrail_http_open_streams',
    ]);
    expect(problems('sum by (reason) (tagtrail_http_open_streams)')).toEqual([
      'groups by reason, which nothing has',
    ]);
    expect(
      problems('histogram_quantile(0.9, sum by (le) (rate(tagtrail_ingest_batch_reads_bucket[1m])))'),
    ).toEqual([]);
    expect(problems('max_over_time(tagtrail_db_pool_waiting_clients[5m]) > 0')).toEqual([]);
  });
});

describe('deploy/grafana/tagtrail.json', () => {
  it('queries only series and labels the service exposes', () => {
    for (const panel of charts) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(problems(target.expr), panel.title).toEqual([]);
    }
  });

  it('has a panel for each query of the docs, and no other', () => {
    const documented = docTable('### Queries for a dashboard').map(([title, cell]) => ({
      title,
      expr: codeOf(cell!),
    }));
    expect(documented.length).toBeGreaterThan(10);
    expect(charts.map((p) => ({ title: p.title, expr: p.targets![0]!.expr }))).toEqual(documented);
  });

  it('reads from the data source its variable chooses, with panels that do not overlap', () => {
    expect(dashboard.uid).toBe('tagtrail');
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of charts) {
      expect(panel.datasource?.uid, panel.title).toBe(CHOSEN_DATASOURCE);
      for (const target of panel.targets ?? []) expect(target.datasource?.uid).toBe(CHOSEN_DATASOURCE);
    }
    const cells = new Map<string, string>();
    for (const { title, gridPos: g } of dashboard.panels) {
      expect(g.x + g.w, title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.get(`${x},${y}`), `${title} overlaps`).toBeUndefined();
          cells.set(`${x},${y}`, title);
        }
      }
    }
  });
});

describe('deploy/prometheus/tagtrail-alerts.yml', () => {
  it('alerts on conditions over series the service exposes', () => {
    expect(rules.length).toBeGreaterThan(5);
    for (const rule of rules) {
      expect(problems(rule.expr), rule.alert).toEqual([]);
      // An alert fires on what a comparison keeps; a bare series would fire on every sample.
      expect(rule.expr, rule.alert).toMatch(/ (==|!=|>|<|>=|<=) -?[\d.]+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels.severity);
      expect(rule.annotations.summary.length, rule.alert).toBeGreaterThan(20);
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('holds the rules of the docs, and no other', () => {
    const documented = docTable('### Alert rules').map(([alert, expr, forTime, severity]) => ({
      alert: codeOf(alert!),
      expr: codeOf(expr!),
      for: forTime,
      severity,
    }));
    expect(
      rules.map((r) => ({ alert: r.alert, expr: r.expr, for: r.for, severity: r.labels.severity })),
    ).toEqual(documented);
  });
});

describe('docs/metrics.md', () => {
  it('describes every tagtrail series the service exposes, and none it does not', () => {
    const exposed = [...SERIES.keys()]
      .filter((name) => name.startsWith('tagtrail_'))
      .map((name) => name.replace(/_(bucket|sum|count)$/, ''));
    const listed = [
      ...METRICS_DOC.split('## A dashboard and alert rules')[0]!.matchAll(/^\| `(tagtrail_\w+)`/gm),
    ].map((m) => m[1]);
    expect(new Set(listed)).toEqual(new Set(exposed));
  });
});
