import type { Database } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';
import { ApiError, type FieldError, fieldError, notFound, validationError } from '../errors.js';
import { parseRfc3339, toWire } from '../http/timestamps.js';
import { exclusivePair, listEnvelope, parseSort } from '../master-data/list-query.js';
import { historyPage, type Page, reportPage } from './queries.js';

export interface HistoryQueryInput extends Page {
  from?: string;
  to?: string;
  sort?: string;
}

export interface ReportQueryInput extends Page {
  location_id?: number[];
  location_external_key?: string[];
  asset_id?: number[];
  asset_external_key?: string[];
  q?: string;
  include_deleted?: boolean;
  sort?: string;
}

const HISTORY_SORTS = ['event_observed_at'] as const;
/** History's sort is one of these, one field with one direction. */
const HISTORY_SORT_VALUES = HISTORY_SORTS.flatMap((field) => [field, `-${field}`]);
const REPORT_SORTS = ['asset_last_seen', 'asset_external_key', 'location_external_key'] as const;

/**
 * List rule 2 for several relationships at once: every ambiguous pair is reported in one
 * error (API-SPEC Errors, Details 2: aggregation is reliable for ambiguous_fields).
 */
function exclusivePairs(query: object, pairs: [string, string][]): void {
  const fields: FieldError[] = [];
  for (const [idName, keyName] of pairs) {
    try {
      exclusivePair(query, idName, keyName);
    } catch (err) {
      if (!(err instanceof ApiError) || !err.fields) throw err;
      fields.push(...err.fields);
    }
  }
  if (fields.length > 0) throw validationError(fields);
}

/** Read side of tracking: history and the asset-location report. */
export class TrackingService {
  constructor(private readonly db: Database) {}

  async history(orgId: number, assetId: number, query: HistoryQueryInput) {
    const sort = parseSort(query.sort, HISTORY_SORTS);
    // API-SPEC: history's sort "allows event_observed_at and -event_observed_at", one field
    // with one direction; a list of both was taken at its first value.
    if (query.sort?.includes(',')) {
      throw fieldError(
        'sort',
        'invalid_value',
        `sort takes one value here: ${HISTORY_SORT_VALUES.join(' or ')}`,
        {
          allowed_values: HISTORY_SORT_VALUES,
        },
      );
    }
    // The schema has validated both as RFC 3339 (format date-time).
    const from = query.from === undefined ? undefined : parseRfc3339(query.from)!;
    const to = query.to === undefined ? undefined : parseRfc3339(query.to)!;
    if (from !== undefined && to !== undefined && to < from) {
      throw fieldError('to', 'invalid_value', 'to must not be earlier than from', { from: toWire(from) });
    }
    const page = { limit: query.limit, offset: query.offset };
    return this.db.readWithOrg(orgId, async (tx) => {
      // History outlives the validity window, not a deletion. The check and the page leave in
      // one write (the pool pipelines), one round trip where awaiting the check made two; a
      // page read for an asset that is not there is empty and thrown away.
      const asset = tx.query(
        preparedQuery('SELECT 1 FROM assets WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL', [
          orgId,
          assetId,
        ]),
      );
      const history = historyPage(
        tx,
        orgId,
        assetId,
        {
          from: from === undefined ? undefined : new Date(from),
          to: to === undefined ? undefined : new Date(to),
          desc: sort[0]?.desc ?? true,
        },
        page,
      );
      // Both settled before anything is thrown: the page may still send its count, which must
      // not follow the transaction's end onto a connection back in the pool.
      const [found, read] = await Promise.allSettled([asset, history]);
      if (found.status === 'rejected') throw found.reason;
      if (!found.value.rowCount) throw notFound('asset');
      if (read.status === 'rejected') throw read.reason;
      const { rows, total } = read.value;
      return listEnvelope(
        rows.map((r) => ({
          event_observed_at: toWire(r.started_at),
          location_id: r.location_id,
          location_external_key: r.location_external_key,
          // To the next arrival; the current stay runs to its last sighting so far.
          duration_seconds: ((r.next_started_at ?? r.last_seen_at).getTime() - r.started_at.getTime()) / 1000,
        })),
        page,
        total,
      );
    });
  }

  async report(orgId: number, query: ReportQueryInput) {
    exclusivePairs(query, [
      ['asset_id', 'asset_external_key'],
      ['location_id', 'location_external_key'],
    ]);
    const sort = parseSort(query.sort, REPORT_SORTS);
    const page = { limit: query.limit, offset: query.offset };
    const q = query.q || undefined;
    const { rows, total } = await this.db.readWithOrg(
      orgId,
      (tx) =>
        reportPage(
          tx,
          orgId,
          {
            locationIds: query.location_id,
            locationKeys: query.location_external_key,
            assetIds: query.asset_id,
            assetKeys: query.asset_external_key,
            q,
            includeDeleted: query.include_deleted ?? false,
            sort,
          },
          page,
        ),
      // Without q every statement is named (reportPage); with q the page is planned for its pattern.
      { genericPlans: q === undefined },
    );
    return listEnvelope(
      rows.map((r) => ({
        ...r,
        // Read in the wire's form (WIRE_INSTANTS).
        asset_last_seen: r.asset_last_seen,
        asset_deleted_at: r.asset_deleted_at,
      })),
      page,
      total,
    );
  }
}
