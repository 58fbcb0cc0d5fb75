/**
 * What bench/soak.mjs reads of the two processes it watches, and the drift it computes.
 */
import { readFile } from 'node:fs/promises';
import type pg from 'pg';

const MiB = 1024 * 1024;

/** Resident memory of `pid` in MiB (Linux /proc). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return kib / 1024;
}

/** CPU seconds `pid` has used (user and system), from /proc/<pid>/stat at 100 ticks a second. */
export async function cpuSeconds(pid: number | string): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds of a PostgreSQL server: the postmaster, its live children (the backends, the
 * writers, autovacuum) and the children it has reaped (cutime, cstime).
 */
export async function serverCpuSeconds(postmasterPid: number): Promise<number> {
  const stat = await readFile(`/proc/${postmasterPid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  const children = (await readFile(`/proc/${postmasterPid}/task/${postmasterPid}/children`, 'utf8'))
    .split(' ')
    .filter(Boolean);
  for (const child of children) {
    ticks += await cpuSeconds(child).then(
      (s) => s * 100,
      () => 0,
    );
  }
  return ticks / 100;
}

/**
 * The sum over all label sets of each series in a Prometheus text exposition (comments
 * and histogram buckets skipped): enough for the gauges the soak samples.
 */
export function metricSums(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{.*\})?\s+(\S+)/.exec(line);
    const name = match?.[1];
    if (!name || name.endsWith('_bucket')) continue;
    sums.set(name, (sums.get(name) ?? 0) + Number(match[3]));
  }
  return sums;
}

/** Ingest's transactions and latencies between two scrapes (metricSums of each). */
export function ingestDelta(
  before: Map<string, number>,
  after: Map<string, number>,
): { transactions: number; booked: number; latencyMs: number; transactionMs: number } {
  const d = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const transactions = d('tagtrail_ingest_batch_messages_count');
  return {
    transactions,
    booked: d('tagtrail_ingest_batch_messages_sum'),
    latencyMs:
      (d('tagtrail_ingest_message_latency_seconds_sum') /
        d('tagtrail_ingest_message_latency_seconds_count')) *
      1000,
    transactionMs:
      (d('tagtrail_ingest_batch_duration_seconds_sum') / d('tagtrail_ingest_batch_duration_seconds_count')) *
      1000,
  };
}

function routeTotals(text: string, histogram: string): Map<string, { sum: number; count: number }> {
  const totals = new Map<string, { sum: number; count: number }>();
  const line = new RegExp(`^${histogram}_(sum|count)\\{(.*)\\}\\s+(\\S+)`);
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    if (!match) continue;
    const labels = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const name = `${labels.method} ${labels.route}`;
    const total = totals.get(name) ?? { sum: 0, count: 0 };
    if (match[1] === 'sum') total.sum += Number(match[3]);
    else total.count += Number(match[3]);
    totals.set(name, total);
  }
  return totals;
}

/**
 * The mean time to answer of each route between two scrapes (`since` the earlier; none: from
 * the start), from the `_sum` and `_count` of a histogram with `method` and `route` labels,
 * statuses pooled: [method route, requests, mean ms], most requests first.
 */
export function routeMeans(text: string, histogram: string, since = ''): Array<[string, number, number]> {
  const before = routeTotals(since, histogram);
  return [...routeTotals(text, histogram)]
    .map(([name, t]): [string, number, number] => {
      const b = before.get(name) ?? { sum: 0, count: 0 };
      const count = t.count - b.count;
      return [name, count, count > 0 ? ((t.sum - b.sum) / count) * 1000 : 0];
    })
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1]);
}

export const toMiB = (bytes: number): number => bytes / MiB;

/** Least-squares slope of `points` ([seconds, value]) per hour; NaN with fewer than three. */
export function slopePerHour(points: Array<[number, number]>): number {
  if (points.length < 3) return Number.NaN;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return (num / den) * 3600;
}

/**
 * The slope per hour of the floor: the least value of each window of `window` points in a
 * row. Heap and RSS saw-tooth with garbage collection, and a few late peaks (a major GC
 * put off under load) tilt a least-squares line over all points; what a leak moves is the
 * floor, the memory still held after each collection.
 */
export function floorSlopePerHour(points: Array<[number, number]>, window = 4): number {
  const floors: Array<[number, number]> = [];
  for (let i = 0; i + window <= points.length; i += window) {
    const slice = points.slice(i, i + window);
    const least = slice.reduce((a, b) => (b[1] < a[1] ? b : a));
    floors.push([slice.reduce((s, [x]) => s + x, 0) / window, least[1]]);
  }
  return slopePerHour(floors);
}

/** The samples after the first `share` of the run (start-up and warm-up left out). */
export const afterWarmup = <T>(samples: T[], share = 0.25): T[] =>
  samples.slice(Math.floor(samples.length * share));

/**
 * Bytes of each table with its indexes and TOAST, partitions counted under their parent
 * (the raw log's days under raw_messages).
 */
export async function tableBytes(db: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ name: string; bytes: string }>(`
    SELECT coalesce(parent.relname, c.relname) AS name, sum(pg_total_relation_size(c.oid))::bigint AS bytes
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
    LEFT JOIN pg_class parent ON parent.oid = i.inhparent
    WHERE c.relkind = 'r'
    GROUP BY 1`);
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]));
}

/** The tables that grew most from `before` to `after`: [name, bytes grown], largest first. */
export function growth(
  before: Map<string, number>,
  after: Map<string, number>,
  top = 8,
): Array<[string, number]> {
  return [...after]
    .map(([name, bytes]): [string, number] => [name, bytes - (before.get(name) ?? 0)])
    .filter(([, grown]) => grown > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
}
