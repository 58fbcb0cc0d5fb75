/**
 * What the benchmarks read of the PostgreSQL server beside their own figures: its CPU from
 * /proc (the embedded server's processes, by kind) and, with BENCH_PG_STATS=1, its WAL and
 * table counters and the statements that took its time (pg_stat_statements).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';

/**
 * CPU milliseconds spent so far by an embedded PostgreSQL: the postmaster, its reaped
 * children and its live ones (each backend, the WAL writer, the checkpointer, …), from
 * /proc (Linux). Null for an external server or where /proc is not there. On a shared
 * machine reads per second follow the load of other work; CPU per read much less so.
 */
export function postgresCpuMs(dataDir: string | null): (() => number) | null {
  const byProcess = postgresCpuByProcess(dataDir);
  if (!byProcess) return null;
  return () => {
    let ms = 0;
    for (const spent of byProcess().values()) ms += spent;
    return ms;
  };
}

/** A process's /proc stat fields after the command name (which may hold spaces). */
function procStat(pid: string | number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** What a server process is, from its title ("checkpointer", "walwriter", …). */
function processKind(pid: string): string {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    if (/\(\d+\)|\[local\]/.test(title)) return 'client backend';
    return title.replace(/^postgres:\s*/, '').replace(/\s+(process|launcher)?$/, '') || 'postgres';
  } catch {
    return 'gone';
  }
}

/**
 * An embedded server's CPU milliseconds so far by kind of process: "postmaster", each
 * child by its title ("client backend", "checkpointer", "walwriter", "autovacuum worker",
 * …), and "exited", the children already reaped (short-lived autovacuum workers). With
 * BENCH_PG_STATS it shows where server CPU goes that no statement's time holds.
 */
export function postgresCpuByProcess(dataDir: string | null): (() => Map<string, number>) | null {
  if (!dataDir) return null;
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!procStat(postmaster)) return null;
  } catch {
    return null;
  }
  const tickMs = 1000 / 100; // USER_HZ: 100 on every Linux this runs on
  // Fields: ppid [1], utime [11], stime [12], cutime [13], cstime [14].
  return () => {
    const out = new Map<string, number>();
    const own = procStat(postmaster);
    if (!own) return out;
    out.set('postmaster', (Number(own[11]) + Number(own[12])) * tickMs);
    out.set('exited', (Number(own[13]) + Number(own[14])) * tickMs);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const f = procStat(entry);
      if (!f || Number(f[1]) !== postmaster) continue;
      const kind = processKind(entry);
      out.set(kind, (out.get(kind) ?? 0) + (Number(f[11]) + Number(f[12])) * tickMs);
    }
    return out;
  };
}

/** With BENCH_PG_STATS: the server-wide WAL and table counters, to subtract run from run. */
export async function serverCounters(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<Record<string, string>>(
    `SELECT w.wal_records, w.wal_fpi, w.wal_bytes,
            (SELECT sum(n_tup_upd) FROM pg_stat_user_tables) AS tup_upd,
            (SELECT sum(n_tup_hot_upd) FROM pg_stat_user_tables) AS tup_hot_upd,
            (SELECT sum(autovacuum_count + autoanalyze_count) FROM pg_stat_user_tables) AS autovacuums,
            (SELECT sum(seq_scan) FROM pg_stat_user_tables) AS seq_scans,
            (SELECT sum(seq_tup_read) FROM pg_stat_user_tables) AS seq_rows_read,
            d.blks_hit, d.blks_read, d.xact_commit
     FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = current_database()`,
  );
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}

/** With BENCH_PG_STATS: what the server did during the run, per read, on stderr. */
export function printServerDelta(
  population: string,
  reads: number,
  before: Record<string, number>,
  after: Record<string, number>,
  cpuBefore: Map<string, number> | undefined,
  cpuAfter: Map<string, number> | undefined,
): void {
  const counters = Object.keys(after)
    .map((k) => `${k} ${(after[k]! - before[k]!).toLocaleString('en-US')}`)
    .join(', ');
  process.stderr.write(`${population}: server counters over the run: ${counters}\n`);
  if (!cpuAfter) return;
  const perRead = [...cpuAfter]
    .map(([k, ms]) => [k, ((ms - (cpuBefore?.get(k) ?? 0)) * 1000) / reads] as const)
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, us]) => `${k} ${us.toFixed(1)}`)
    .join(', ');
  process.stderr.write(`${population}: server CPU µs per read by process: ${perRead}\n`);
}

/** With BENCH_PG_STATS: the statements that took the server's time during the run, on stderr. */
export async function printStatements(pool: pg.Pool, population: string): Promise<void> {
  const { rows } = await pool.query<{
    ms: number;
    plan_ms: number;
    calls: string;
    rows: string;
    blocks: string;
    wal: string;
    query: string;
  }>(
    `SELECT round(total_exec_time::numeric, 1)::float AS ms, round(total_plan_time::numeric, 1)::float AS plan_ms,
            calls, rows, shared_blks_hit + shared_blks_read AS blocks, wal_records AS wal, regexp_replace(left(query, 160), '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
     ORDER BY total_exec_time + total_plan_time DESC LIMIT 20`,
  );
  const total = rows.reduce((sum, r) => sum + r.ms, 0);
  process.stderr.write(
    `${population}: statements by execution time (top 20, ${total.toFixed(0)} ms in all)\n`,
  );
  // Buffers touched and WAL records per row returned or changed: what a row costs beside its time.
  const perRow = (n: string, r: { rows: string; calls: string }) =>
    (Number(n) / Math.max(1, Number(r.rows) || Number(r.calls))).toFixed(1).padStart(6);
  for (const r of rows) {
    process.stderr.write(
      `${r.ms.toFixed(0).padStart(8)} ms ${r.plan_ms.toFixed(0).padStart(6)} ms planning ${String(r.calls).padStart(7)} calls ${String(r.rows).padStart(8)} rows ${perRow(r.blocks, r)} buffers/row ${perRow(r.wal, r)} WAL/row  ${r.query}\n`,
    );
  }
}
