import type { Tx } from '../db/pool.js';
import { containsPattern, EFFECTIVE, type SortKey } from '../master-data/list-query.js';

export interface HistoryRow {
  started_at: Date;
  location_id: number;
  location_external_key: string | null;
  duration_seconds: number;
}

export interface Page {
  limit: number;
  offset: number;
}

/**
 * An asset's stays as history rows. Durations are computed over the whole history before
 * `from`/`to` cut it, so the last row of a window still measures up to the next arrival.
 */
export async function historyPage(
  tx: Tx,
  orgId: number,
  assetId: number,
  filter: { from?: Date; to?: Date; desc: boolean },
  page: Page,
): Promise<{ rows: HistoryRow[]; total: number }> {
  const params: unknown[] = [orgId, assetId];
  const where: string[] = [];
  if (filter.from) where.push(`h.started_at >= $${params.push(filter.from)}`);
  if (filter.to) where.push(`h.started_at <= $${params.push(filter.to)}`);
  const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const base = `
    WITH h AS (
      SELECT s.started_at, s.location_id,
        extract(epoch FROM coalesce(lead(s.started_at) OVER (ORDER BY s.started_at), s.last_seen_at) - s.started_at)::float8
          AS duration_seconds
      FROM stays s WHERE s.org_id = $1 AND s.asset_id = $2
    )`;
  const limitAt = params.push(page.limit);
  const offsetAt = params.push(page.offset);
  const { rows } = await tx.query<HistoryRow & { total: number }>(
    `${base}
     SELECT h.started_at, h.location_id, h.duration_seconds,
       CASE WHEN l.valid_to IS NOT NULL AND l.valid_to <= now() THEN NULL ELSE l.external_key END AS location_external_key,
       count(*) OVER ()::int AS total
     FROM h JOIN locations l ON l.id = h.location_id AND l.org_id = $1
     ${whereSql}
     ORDER BY h.started_at ${filter.desc ? 'DESC' : 'ASC'}
     LIMIT $${limitAt} OFFSET $${offsetAt}`,
    params,
  );
  if (rows.length > 0 || page.offset === 0) return { rows, total: rows[0]?.total ?? 0 };
  // Past the last page the window count is not visible: count separately.
  const count = await tx.query<{ n: number }>(
    `${base} SELECT count(*)::int AS n FROM h ${whereSql}`,
    params.slice(0, limitAt - 1),
  );
  return { rows, total: count.rows[0]!.n };
}

export interface ReportFilter {
  locationIds?: number[];
  locationKeys?: string[];
  assetIds?: number[];
  assetKeys?: string[];
  q?: string;
  includeDeleted: boolean;
  sort: SortKey[];
}

export interface ReportRow {
  asset_id: number;
  asset_external_key: string;
  asset_last_seen: Date;
  asset_deleted_at: Date | null;
  location_id: number | null;
  location_external_key: string | null;
}

const REPORT_SORT: Record<string, string> = {
  asset_last_seen: 'a.last_seen_at',
  asset_external_key: 'a.external_key',
  location_external_key: 'shown_location_key',
};

/** The report query; exported so a test can EXPLAIN exactly what runs. */
export function reportSql(
  orgId: number,
  filter: ReportFilter,
  page: Page,
): { text: string; values: unknown[] } {
  const values: unknown[] = [orgId];
  const p = (v: unknown) => `$${values.push(v)}`;
  // A location outside its window, or soft-deleted, is shown as null.
  const shown = `(l.id IS NOT NULL AND l.deleted_at IS NULL AND ${EFFECTIVE('l')})`;
  const where = ['a.org_id = $1', 'a.last_seen_at IS NOT NULL', EFFECTIVE('a')];
  if (!filter.includeDeleted) where.push('a.deleted_at IS NULL');
  if (filter.assetIds) where.push(`a.id = ANY(${p(filter.assetIds)}::bigint[])`);
  if (filter.assetKeys) where.push(`a.external_key = ANY(${p(filter.assetKeys)}::text[])`);
  if (filter.locationIds) where.push(`${shown} AND l.id = ANY(${p(filter.locationIds)}::bigint[])`);
  if (filter.locationKeys) where.push(`${shown} AND l.external_key = ANY(${p(filter.locationKeys)}::text[])`);
  if (filter.q) {
    where.push(
      `lower((a.external_key || chr(1) || a.name || chr(1) || a.tag_values) COLLATE "und-x-icu") LIKE ${p(containsPattern(filter.q))}`,
    );
  }
  const sort = filter.sort.length ? filter.sort : [{ field: 'asset_last_seen', desc: true }];
  const order = sort.map((s) => `${REPORT_SORT[s.field]} ${s.desc ? 'DESC' : 'ASC'}`);
  const text = `
    SELECT a.id AS asset_id, a.external_key AS asset_external_key, a.last_seen_at AS asset_last_seen,
      a.deleted_at AS asset_deleted_at,
      CASE WHEN ${shown} THEN l.id END AS location_id,
      CASE WHEN ${shown} THEN l.external_key END AS shown_location_key,
      count(*) OVER ()::int AS total
    FROM assets a LEFT JOIN locations l ON l.id = a.location_id AND l.org_id = a.org_id
    WHERE ${where.join(' AND ')}
    ORDER BY ${[...order, `a.id ${sort[0]!.desc ? 'DESC' : 'ASC'}`].join(', ')}
    LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  return { text, values };
}

export async function reportPage(
  tx: Tx,
  orgId: number,
  filter: ReportFilter,
  page: Page,
): Promise<{ rows: ReportRow[]; total: number }> {
  const { text, values } = reportSql(orgId, filter, page);
  const { rows } = await tx.query<ReportRow & { shown_location_key: string | null; total: number }>(
    text,
    values,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page.offset > 0) {
    const count = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (${text.replace(/LIMIT \$\d+ OFFSET \$\d+\s*$/, '')}) x`,
      values.slice(0, -2),
    );
    total = count.rows[0]!.n;
  }
  return {
    rows: rows.map(({ shown_location_key, total: _t, ...r }) => ({
      ...r,
      location_external_key: shown_location_key,
    })),
    total,
  };
}
