/**
 * A reader message whose reads fail to be placed on every attempt (a bug, a constraint the
 * placing breaks) is booked without them, not refused: refused, the reader would send it
 * again and again, and hold up every message behind it. Its raw log row keeps the payload
 * and says why, its reads count as bad, and a redelivery is recognised as one. A failure
 * that may pass on another attempt (here a serialization failure) still refuses it, and
 * nothing of it is stored. The failures are raised by a trigger on the stays, at one
 * location.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laneOfKey, READER_LANES } from '../../src/ingest/reader-lanes.js';
import { IngestService } from '../../src/ingest/service.js';
import { matchKey } from '../../src/tracking/resolve.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { genericJson, ingestFixture, iso, readerRef } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

/** Stays at `location` fail to be inserted with SQLSTATE `code` (until the next call). */
async function refuseStaysAt(location: number, code: string): Promise<void> {
  await t.database.db.pool.query(`
    CREATE OR REPLACE FUNCTION test_refuse_stays() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.location_id = ${Number(location)} THEN
        RAISE EXCEPTION 'stays at % refused by the test', NEW.location_id USING ERRCODE = '${code}';
      END IF;
      RETURN NEW;
    END $$;
    CREATE OR REPLACE TRIGGER test_refuse_stays BEFORE INSERT ON stays
      FOR EACH ROW EXECUTE FUNCTION test_refuse_stays();`);
}

/** A tag value whose reads go to `lane`, the n-th such one. */
function tagInLane(lane: number, n: number): string {
  let found = 0;
  for (let i = 0; ; i++) {
    const tag = `E2000000000000000000${i.toString(16).toUpperCase().padStart(4, '0')}`;
    if (laneOfKey(matchKey('rfid', tag)) === lane && found++ === n) return tag;
  }
}

/**
 * An organization whose stays at `broken` are refused with P0001, a reader whose antenna 1
 * reads there and antenna 2 at `fine`, and an asset carrying each of `tags`.
 */
async function brokenSite(tags: [string, string]) {
  const f = await ingestFixture(t);
  const [broken, fine] = [await f.location(), await f.location()];
  await refuseStaysAt(broken, 'P0001');
  const assets: [number, number] = [await f.asset(tags[0]), await f.asset(tags[1])];
  const { reader } = await f.reader('generic-json', [
    [1, broken],
    [2, fine],
  ]);
  return { f, fine, assets, reader, ingest: new IngestService(t.database.db) };
}

describe('reads that cannot be placed', () => {
  it('that fail every time: the message is booked without them, once', async () => {
    const tag = tagInLane(0, 0);
    const other = tagInLane(0, 1);
    const {
      f,
      fine,
      assets: [asset, placed],
      reader,
      ingest,
    } = await brokenSite([tag, other]);
    const at = Date.now() - 60_000;
    const message = genericJson([[tag, 1, iso(at)]]);
    // With another reader's message in the same lane, committed with it or after it.
    const [outcome, neighbour] = await Promise.all([
      ingest.readerMessage(readerRef(reader), message, 'mqtt'),
      ingest.readerMessage(readerRef(reader), genericJson([[other, 2, iso(at)]]), 'mqtt'),
    ]);
    expect(outcome).toMatchObject({ good: 0, bad: 1, unknown: 0 });
    expect(outcome.errors).toEqual([
      expect.stringMatching(/^1 read\(s\) not placed: P0001 stays at \d+ refused/),
    ]);
    expect(neighbour).toMatchObject({ good: 1, bad: 0 });
    expect(await f.currentLocation(placed)).toBe(fine);
    expect(await f.currentLocation(asset)).toBeNull();

    const raw = await f.rawMessages(reader.id);
    expect(raw.find((r) => r.payload === message)).toMatchObject({ good_reads: 0, bad_reads: 1 });
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 1, unknown: 0 });
    // Its reader times make a repeat a redelivery: acknowledged, not stored again.
    expect(await ingest.readerMessage(readerRef(reader), message, 'mqtt')).toMatchObject({ duplicate: true });
    expect(await f.rawMessages(reader.id)).toHaveLength(2);
  });

  it.each([
    ['stored in parts', false],
    // The whole message's transaction fails, and the message is stored in parts instead.
    ['tried whole across its idle lanes first', true],
  ])('in one lane of a message split over several (%s): the other lanes place theirs', async (_, across) => {
    const [refused, kept] = [tagInLane(1, 0), tagInLane(2 % READER_LANES, 0)];
    const {
      f,
      fine,
      assets: [lost, moved],
      reader,
    } = await brokenSite([refused, kept]);
    const ingest = new IngestService(t.database.db, undefined, undefined, { acrossIdleLanes: across });
    const at = Date.now() - 30_000;
    const outcome = await ingest.readerMessage(
      readerRef(reader),
      genericJson([
        [refused, 1, iso(at)],
        [kept, 2, iso(at)],
      ]),
      'mqtt',
    );
    expect(outcome).toMatchObject({ good: 1, bad: 1, unknown: 0 });
    expect(outcome.errors).toEqual([expect.stringContaining('1 read(s) not placed: P0001')]);
    expect(await f.currentLocation(moved)).toBe(fine);
    expect(await f.currentLocation(lost)).toBeNull();
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 1, unknown: 0 });
  });

  it('that may pass another time: the message is refused and nothing of it is stored', async () => {
    const f = await ingestFixture(t);
    const broken = await f.location();
    await refuseStaysAt(broken, '40001');
    const tag = tagInLane(3, 0);
    await f.asset(tag);
    const { reader } = await f.reader('generic-json', [[1, broken]]);
    const ingest = new IngestService(t.database.db);
    await expect(
      ingest.readerMessage(readerRef(reader), genericJson([[tag, 1, iso(Date.now() - 10_000)]]), 'mqtt'),
    ).rejects.toThrow();
    expect(await f.rawMessages(reader.id)).toEqual([]);
    expect(await f.readerCounters(reader.id)).toEqual({ good: 0, bad: 0, unknown: 0 });
  });
});
