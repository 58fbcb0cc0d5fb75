/**
 * Issue 12, item 3: a reader message delivered twice (MQTT is at least once) has its effect
 * once when it is the same observation (its reads carry the reader's own times and its bytes
 * repeat from the same reader), and is a new observation otherwise (docs/ingest.md,
 * "Redeliveries").
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLOCK_POLICY, digestWindowMs } from '../../src/ingest/clock-policy.js';
import { claimDigests, payloadDigest } from '../../src/ingest/message-digests.js';
import { dropExpiredDigests } from '../../src/ingest/retention.js';
import { IngestService } from '../../src/ingest/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { genericJson, ingestFixture, iso, readerRef, unique } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

const digests = async (readerId: number) => {
  const { rows } = await t.database.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM message_digests WHERE reader_id = $1',
    [readerId],
  );
  return rows[0]!.n;
};
const lastSeen = async (assetId: number) => {
  const { rows } = await t.database.db.pool.query<{ at: Date }>(
    'SELECT max(last_seen_at) AS at FROM stays WHERE asset_id = $1',
    [assetId],
  );
  return rows[0]!.at.getTime();
};

describe('a message delivered again', () => {
  it('with reader times, from the same reader: stored, counted and applied once', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const asset = await f.asset('E2000000000000000000A101');
    const { reader } = await f.reader('generic-json', [
      [1, dock],
      [2, shelf],
    ]);
    const ingest = new IngestService(t.database.db);
    const at = Date.now() - 60_000;
    const message = genericJson([
      ['E2000000000000000000A101', 1, iso(at)],
      ['E20000000000000000000BAD', 1, iso(at)],
    ]);
    const first = await ingest.readerMessage(readerRef(reader), message, 'mqtt');
    expect(first).toMatchObject({ good: 1, unknown: 1 });
    expect(first.duplicate).toBeUndefined();
    // In between, the asset moved on (a later read at the shelf).
    await ingest.readerMessage(
      readerRef(reader),
      genericJson([['E2000000000000000000A101', 2, iso(at + 1000)]]),
      'mqtt',
    );

    // Redelivered as a Buffer (as MQTT hands it over) and as the webhook would: same bytes.
    const again = await ingest.readerMessage(readerRef(reader), Buffer.from(message), 'mqtt');
    expect(again).toEqual({ good: 0, bad: 0, unknown: 0, errors: [], duplicate: true });
    expect(await ingest.readerMessage(readerRef(reader), message, 'webhook')).toMatchObject({
      duplicate: true,
    });

    expect(await f.readerCounters(reader.id)).toEqual({ good: 2, bad: 0, unknown: 1 });
    expect((await f.rawMessages(reader.id)).map((m) => m.payload)).toEqual([
      message,
      expect.stringContaining('A101'),
    ]);
    expect(await f.currentLocation(asset)).toBe(shelf);
    expect((await f.history(asset)).map((h) => h.location_id)).toEqual([shelf, dock]);
    expect(await digests(reader.id)).toBe(2);
  });

  it('with reader times, from another reader: a message of its own', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000A201');
    const one = (await f.reader('generic-json', [[null, dock]])).reader;
    const other = (await f.reader('generic-json', [[null, dock]])).reader;
    const ingest = new IngestService(t.database.db);
    const message = genericJson([['E2000000000000000000A201', 1, iso(Date.now() - 5_000)]]);
    expect(await ingest.readerMessage(readerRef(one), message, 'mqtt')).toMatchObject({ good: 1 });
    expect(await ingest.readerMessage(readerRef(other), message, 'mqtt')).toMatchObject({ good: 1 });
    expect((await f.readerCounters(one.id)).good).toBe(1);
    expect((await f.readerCounters(other.id)).good).toBe(1);
  });

  it('without reader times: a new observation each time, counted, and last-seen advances', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const asset = await f.asset('E2000000000000000000A301');
    const { reader } = await f.reader('generic-json', [[null, dock]]);
    const ingest = new IngestService(t.database.db);
    const message = genericJson([['E2000000000000000000A301', 1, null]]);
    const t0 = Date.now() - 2_000;
    await ingest.readerMessage(readerRef(reader), message, 'mqtt', t0);
    expect(await lastSeen(asset)).toBe(t0);
    const again = await ingest.readerMessage(readerRef(reader), message, 'mqtt', t0 + 1_000);
    expect(again).toMatchObject({ good: 1 });
    expect(again.duplicate).toBeUndefined();
    expect(await lastSeen(asset)).toBe(t0 + 1_000);
    expect((await f.readerCounters(reader.id)).good).toBe(2);
    expect(await f.rawMessages(reader.id)).toHaveLength(2);
    expect(await digests(reader.id)).toBe(0);
  });

  it('with a reader time not trusted (a clock never set), or malformed: counted each time', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000A401');
    const { reader } = await f.reader('generic-json', [[null, dock]]);
    const ingest = new IngestService(t.database.db);
    const stale = genericJson([['E2000000000000000000A401', 1, '1970-01-02T00:00:00Z']]);
    const malformed = '{"reads": [{"tag": "E2000';
    for (let i = 0; i < 2; i++) {
      await ingest.readerMessage(readerRef(reader), stale, 'mqtt');
      await ingest.readerMessage(readerRef(reader), malformed, 'mqtt');
    }
    expect(await f.readerCounters(reader.id)).toEqual({ good: 2, bad: 2, unknown: 0 });
    expect(await f.rawMessages(reader.id)).toHaveLength(4);
  });

  it('delivered many times at once (several consumers): exactly one of them stores it', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000A501');
    const { reader } = await f.reader('generic-json', [[null, dock]]);
    const ingest = new IngestService(t.database.db);
    const message = genericJson([['E2000000000000000000A501', 1, iso(Date.now() - 1_000)]]);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () => ingest.readerMessage(readerRef(reader), message, 'mqtt')),
    );
    expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 0, unknown: 0 });
    expect(await f.rawMessages(reader.id)).toHaveLength(1);
  });
});

describe('a message claimed before migration 0057', () => {
  it('is refused when delivered again after it (a legacy claim), and its reader times key the new claims', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000A301');
    const { reader } = await f.reader('generic-json', [[1, dock]]);
    const at = Date.now() - 120_000;
    const message = genericJson([
      ['E2000000000000000000A301', 1, iso(at + 500)],
      ['E2000000000000000000A301', 1, iso(at)],
    ]);
    // Stored by the build before 0057, whose claim now is a legacy one.
    await t.database.db.pool.query(
      `INSERT INTO message_digests_legacy (reader_id, digest, org_id, seen_at) VALUES ($1, $2, $3, $4)`,
      [reader.id, payloadDigest(message), f.orgId, new Date(at + 1000)],
    );
    await t.database.db.pool.query('UPDATE message_digests_legacy_bound SET last_seen_at = $1', [
      new Date(at + 1000),
    ]);
    try {
      const ingest = new IngestService(t.database.db);
      const again = await ingest.readerMessage(readerRef(reader), message, 'mqtt');
      expect(again).toEqual({ good: 0, bad: 0, unknown: 0, errors: [], duplicate: true });
      expect(await f.rawMessages(reader.id)).toEqual([]);
      expect(await digests(reader.id)).toBe(0);

      // A message read later is claimed by its earliest reader time, and stored once.
      const later = genericJson([['E2000000000000000000A301', 1, iso(at + 60_000)]]);
      expect(await ingest.readerMessage(readerRef(reader), later, 'mqtt')).toMatchObject({ good: 1 });
      expect(await ingest.readerMessage(readerRef(reader), later, 'mqtt')).toMatchObject({ duplicate: true });
      const { rows } = await t.database.db.pool.query<{ at: Date }>(
        'SELECT first_read_at AS at FROM message_digests WHERE reader_id = $1',
        [reader.id],
      );
      expect(rows.map((r) => r.at.getTime())).toEqual([at + 60_000]);
    } finally {
      await t.database.db.pool.query('UPDATE message_digests_legacy_bound SET last_seen_at = NULL');
    }
  });
});

describe('digest claims and their window', () => {
  it('claim a batch at once; a digest twice in a batch or claimed before is refused', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const [a, b] = [
      (await f.reader('generic-json', [[null, dock]])).reader,
      (await f.reader('generic-json', [[null, dock]])).reader,
    ];
    const now = Date.now();
    const x = payloadDigest(unique('x'));
    const y = payloadDigest(Buffer.from(unique('y')));
    const claim = (claims: Array<[number, Buffer]>) =>
      t.database.db.withOrg(f.orgId, (tx) =>
        claimDigests(
          tx,
          f.orgId,
          claims.map(([readerId, digest]) => ({
            readerId,
            digest,
            firstReadAt: now - 1000,
            receivedAt: now,
          })),
        ),
      );
    expect(await claim([])).toEqual([]);
    expect(
      await claim([
        [b.id, y],
        [a.id, x],
        [a.id, x],
        [b.id, x],
      ]),
    ).toEqual([true, true, false, true]);
    expect(
      await claim([
        [a.id, y],
        [b.id, y],
      ]),
    ).toEqual([true, false]);
    expect(payloadDigest('same')).toEqual(payloadDigest(Buffer.from('same')));
    expect(payloadDigest('same')).toHaveLength(16);
  });

  it('tell each claim of any batch apart: the first of a digest is made, any repeat is refused', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const readers = [
      (await f.reader('generic-json', [[null, dock]])).reader.id,
      (await f.reader('generic-json', [[null, dock]])).reader.id,
    ];
    const now = Date.now();
    let run = 0;
    const claim = fc.record({
      reader: fc.constantFrom(0, 1),
      payload: fc.integer({ min: 0, max: 6 }),
      firstReadAt: fc.constantFrom(now - 2000, now - 1000),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(claim, { maxLength: 8 }), { minLength: 1, maxLength: 4 }),
        async (batches) => {
          run++;
          const made = new Set<string>();
          for (const batch of batches) {
            const claims = batch.map((c) => ({
              readerId: readers[c.reader]!,
              digest: payloadDigest(`run ${run} payload ${c.payload}`),
              firstReadAt: c.firstReadAt,
              receivedAt: now,
            }));
            const got = await t.database.db.withOrg(f.orgId, (tx) => claimDigests(tx, f.orgId, claims));
            const want = batch.map((c) => {
              const key = `${c.reader}:${c.payload}:${c.firstReadAt}`;
              if (made.has(key)) return false;
              made.add(key);
              return true;
            });
            expect(got).toEqual(want);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('are deleted once past the window, in batches, and the rest kept', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const { reader } = await f.reader('generic-json', [[null, dock]]);
    const now = Date.now();
    const window = digestWindowMs(DEFAULT_CLOCK_POLICY);
    const ages = [window + 3_600_000, window + 1, window + 1, window + 1, window - 1, 0];
    await t.database.db.withOrg(f.orgId, (tx) =>
      claimDigests(
        tx,
        f.orgId,
        ages.map((age, i) => ({
          readerId: reader.id,
          digest: payloadDigest(`m${i}`),
          firstReadAt: now - age,
          receivedAt: now - age,
        })),
      ),
    );
    // Other tests' digests are younger than this clock's window: only these four expire.
    expect(await dropExpiredDigests(t.database.db, window, now, 3)).toBe(4);
    expect(await digests(reader.id)).toBe(2);
    expect(await dropExpiredDigests(t.database.db, window, now, 3)).toBe(0);
  });
});
