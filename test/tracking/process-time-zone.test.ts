/**
 * Instants sent to PostgreSQL as parameters do not depend on the process's time zone (TZ).
 * node-postgres writes a Date in local time with the offset in whole minutes, which drops
 * the seconds of an offset that had them: local mean time before standard time
 * (Asia/Kolkata +05:53:28 until 1854, America/New_York -04:56:02 until 1883). Such an
 * instant went 28 s (2 s) off, so history's `from`/`to` missed the stay they named. Late
 * reads are placed among stays by the same kind of parameter, so they are checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { type HistoryWorld, historyHelpers, historyWorld, shape } from './history-world.js';

const ZONES = ['Asia/Kolkata', 'America/New_York'];

let t: TestApp;
let world: HistoryWorld;
const zoneBefore = process.env.TZ;

beforeAll(async () => {
  t = await buildTestApp();
  world = await historyWorld(t);
});

afterAll(async () => {
  if (zoneBefore === undefined) delete process.env.TZ;
  else process.env.TZ = zoneBefore;
  await t?.close();
});

const { newAsset, history } = historyHelpers(() => world);

describe.each(ZONES)('with TZ=%s', (zone) => {
  beforeAll(() => {
    process.env.TZ = zone;
  });

  it('from = to = a stay of 1850 selects that stay', async () => {
    const { f, A, B } = world;
    const id = await newAsset();
    await f.scan([id, A, '1850-01-01T00:00:00.123Z'], [id, B, '1850-01-01T01:00:00.000Z']);
    const at = '1850-01-01T00:00:00.123Z';
    const res = await history(id, [
      ['from', at],
      ['to', at],
    ]);
    expect(shape(res.data)).toEqual([[at, 'LOC-A', 3599.877]]);
    const before = await history(id, [['to', '1850-01-01T00:59:59.999Z']]);
    expect(before.total_count).toBe(1);
  });

  it('a late read of 1850 seconds before an arrival is placed before it', async () => {
    const { f, A, B, C } = world;
    const id = await newAsset();
    await f.scan([id, A, '1850-01-01T00:00:00.000Z'], [id, B, '1850-01-01T01:00:00.000Z']);
    await f.scan([id, C, '1850-01-01T00:59:59.000Z']);
    const res = await history(id, [['sort', 'event_observed_at']]);
    expect(shape(res.data)).toEqual([
      ['1850-01-01T00:00:00.000Z', 'LOC-A', 3599],
      ['1850-01-01T00:59:59.000Z', 'LOC-C', 1],
      ['1850-01-01T01:00:00.000Z', 'LOC-B', 0],
    ]);
  });
});
