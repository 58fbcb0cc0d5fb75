/**
 * The asset-history tests' world: one organization with three locations, fresh assets per test
 * so tests do not share history, and the request and row shapes they check.
 */
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { type Fixture, fixture, qs } from './fixtures.js';

export interface Row {
  event_observed_at: string;
  location_id: number | null;
  location_external_key: string | null;
  duration_seconds: number;
}

export interface ListBody {
  data: Row[];
  limit: number;
  offset: number;
  total_count: number;
}

export interface HistoryWorld {
  f: Fixture;
  A: number;
  B: number;
  C: number;
}

/** An organization with the locations LOC-A, LOC-B and LOC-C. */
export async function historyWorld(t: TestApp): Promise<HistoryWorld> {
  const f = await fixture(t);
  return { f, A: await f.location('LOC-A'), B: await f.location('LOC-B'), C: await f.location('LOC-C') };
}

export const shape = (rows: Row[]) =>
  rows.map((r) => [r.event_observed_at, r.location_external_key, r.duration_seconds]);

/** `world` is a getter because beforeAll builds the world after the test file has been loaded. */
export function historyHelpers(world: () => HistoryWorld) {
  let assetCounter = 0;
  /** A fresh asset for one test, so tests do not share history. */
  const newAsset = (options?: Parameters<Fixture['asset']>[1]) =>
    world().f.asset(`H-${++assetCounter}`, options);

  async function history(assetId: number, query: [string, string | number | boolean][] = []) {
    const res = await world().f.get(`/api/v1/assets/${assetId}/history${qs(query)}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as ListBody;
  }

  /** An asset seen at A at 10:00 and 10:30, at B at 11:00, at C at 12:00 and 12:15 (2025-03-01). */
  async function threeStays(): Promise<number> {
    const { f, A, B, C } = world();
    const id = await newAsset();
    await f.scan(
      [id, A, '2025-03-01T10:00:00Z'],
      [id, A, '2025-03-01T10:30:00Z'],
      [id, B, '2025-03-01T11:00:00Z'],
      [id, C, '2025-03-01T12:00:00Z'],
      [id, C, '2025-03-01T12:15:00Z'],
    );
    return id;
  }

  return { newAsset, history, threeStays };
}
