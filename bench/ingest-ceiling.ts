/**
 * The ceiling the ingest benchmark reports the service against: the rows a run stores,
 * written straight into PostgreSQL without MQTT, parsing, tag resolution or the stays
 * logic, on the same server, tables and indexes, in the same run (so the machine's load
 * weighs on both alike). Two figures:
 *
 * - COPY: every message's raw log row and the stays the run ends with, each table in one
 *   COPY: the fastest PostgreSQL takes in these rows at all.
 * - one transaction per message: per message, its raw log row, its stays (extended, or
 *   appended when the asset moved) and the assets' current location, in one transaction,
 *   four connections at once (one per reader): what storing messages one by one costs.
 *
 * Both write into the tables the service wrote (after its figures were taken), at later
 * instants (so nothing collides with the service's stays), and leave rows behind: the
 * benchmark drops the database afterwards.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

export interface CeilingRead {
  assetId: number;
  locationId: number;
  at: number;
}

export interface CeilingMessage {
  readerId: number;
  payload: string;
  reads: CeilingRead[];
}

export interface CeilingInput {
  url: string;
  orgId: number;
  messages: CeilingMessage[];
  /** How far after the service's instants the ceiling's rows go (distinct per ceiling). */
  shiftMs: number;
}

const csvText = (s: string) => `"${s.replaceAll('"', '""')}"`;
const iso = (ms: number) => new Date(ms).toISOString();

/** The stays the reads come to, in time order per asset: one per run of reads at one location. */
function staysOf(messages: CeilingMessage[], shiftMs: number) {
  const byAsset = new Map<number, CeilingRead[]>();
  for (const m of messages) {
    for (const r of m.reads) {
      const list = byAsset.get(r.assetId);
      if (list) list.push(r);
      else byAsset.set(r.assetId, [r]);
    }
  }
  const stays: Array<{ assetId: number; locationId: number; startedAt: number; lastSeenAt: number }> = [];
  for (const [assetId, reads] of byAsset) {
    reads.sort((a, b) => a.at - b.at);
    let open: (typeof stays)[number] | undefined;
    for (const r of reads) {
      if (open && open.locationId === r.locationId) open.lastSeenAt = r.at + shiftMs;
      else {
        open = { assetId, locationId: r.locationId, startedAt: r.at + shiftMs, lastSeenAt: r.at + shiftMs };
        stays.push(open);
      }
    }
  }
  return stays;
}

/** Seconds to COPY the raw log rows and the resulting stays. */
export async function copyCeiling(input: CeilingInput): Promise<number> {
  const { orgId, messages, shiftMs } = input;
  const now = Date.now();
  const raw = messages
    .map((m) => `${iso(now)},${orgId},${m.readerId},mqtt,${csvText(m.payload)},${m.reads.length},0,0\n`)
    .join('');
  const stays = staysOf(messages, shiftMs)
    .map((s) => `${orgId},${s.assetId},${s.locationId},${iso(s.startedAt)},${iso(s.lastSeenAt)}\n`)
    .join('');
  const client = new pg.Client({ connectionString: input.url });
  await client.connect();
  try {
    const started = performance.now();
    await pipeline(
      Readable.from([raw]),
      client.query(
        copyFrom(
          'COPY raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads) FROM STDIN WITH (FORMAT csv)',
        ),
      ),
    );
    await pipeline(
      Readable.from([stays]),
      client.query(
        copyFrom(
          'COPY stays (org_id, asset_id, location_id, started_at, last_seen_at) FROM STDIN WITH (FORMAT csv)',
        ),
      ),
    );
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

/**
 * Seconds to store each message in a transaction of its own: raw log row, stays
 * extended or appended, assets' current location. Four connections, each taking the next
 * message; the newest stay of each asset is tracked in memory (no reads, no locks).
 */
export async function transactionCeiling(input: CeilingInput, connections = 4): Promise<number> {
  const { orgId, messages, shiftMs } = input;
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: input.url });
      await c.connect();
      return c;
    }),
  );
  // Newest stay per asset as the rows are written: its start (with the asset, its key) and location.
  const newest = new Map<number, { startedAt: Date; locationId: number }>();
  let next = 0;
  const worker = async (client: pg.Client) => {
    for (let i = next++; i < messages.length; i = next++) {
      const m = messages[i]!;
      const extend = new Map<number, { assetId: number; startedAt: Date; at: number }>();
      const append: CeilingRead[] = [];
      for (const r of m.reads) {
        const n = newest.get(r.assetId);
        if (n && n.locationId === r.locationId)
          extend.set(r.assetId, { assetId: r.assetId, startedAt: n.startedAt, at: r.at + shiftMs });
        else append.push(r);
      }
      for (let attempt = 0; ; attempt++) {
        try {
          await storeOne(client, m, extend, append);
          break;
        } catch (err) {
          await client.query('ROLLBACK');
          // Two messages updating the same assets in other orders: PostgreSQL picks one to retry.
          if ((err as { code?: string }).code !== '40P01' || attempt > 5) throw err;
        }
      }
    }
  };
  const storeOne = async (
    client: pg.Client,
    m: CeilingMessage,
    extend: Map<number, { assetId: number; startedAt: Date; at: number }>,
    append: CeilingRead[],
  ) => {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads) VALUES (now(), $1, $2, 'mqtt', $3, $4)`,
      [orgId, m.readerId, m.payload, m.reads.length],
    );
    if (extend.size > 0) {
      const rows = [...extend.values()];
      await client.query(
        `UPDATE stays s SET last_seen_at = greatest(s.last_seen_at, v.at)
           FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[]) AS v(asset_id, started_at, at)
           WHERE s.org_id = $1 AND s.asset_id = v.asset_id AND s.started_at = v.started_at`,
        [orgId, rows.map((r) => r.assetId), rows.map((r) => r.startedAt), rows.map((r) => new Date(r.at))],
      );
    }
    if (append.length > 0) {
      const inserted = await client.query<{ asset_id: number; location_id: number; started_at: Date }>(
        `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
           SELECT $1, v.asset_id, v.location_id, v.at, v.at FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[]) AS v(asset_id, location_id, at)
           ON CONFLICT DO NOTHING RETURNING asset_id, location_id, started_at`,
        [
          orgId,
          append.map((r) => r.assetId),
          append.map((r) => r.locationId),
          append.map((r) => new Date(r.at + shiftMs)),
        ],
      );
      for (const row of inserted.rows)
        newest.set(row.asset_id, { startedAt: row.started_at, locationId: row.location_id });
    }
    // The service's write of the current position (asset_positions, migration 0042): one
    // row per asset, its latest read (an upsert may not touch a row twice).
    const latest = new Map<number, (typeof m.reads)[number]>();
    for (const r of m.reads) if ((latest.get(r.assetId)?.at ?? -Infinity) <= r.at) latest.set(r.assetId, r);
    const sorted = [...latest.values()].sort((a, b) => a.assetId - b.assetId);
    await client.query(
      `INSERT INTO asset_positions AS p (org_id, asset_id, location_id, last_seen_at)
         SELECT $4, * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[])
         ON CONFLICT (asset_id) DO UPDATE SET location_id = excluded.location_id, last_seen_at = excluded.last_seen_at`,
      [
        sorted.map((r) => r.assetId),
        sorted.map((r) => r.locationId),
        sorted.map((r) => new Date(r.at + shiftMs)),
        orgId,
      ],
    );
    await client.query('COMMIT');
  };
  try {
    const started = performance.now();
    await Promise.all(clients.map(worker));
    return (performance.now() - started) / 1000;
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}
