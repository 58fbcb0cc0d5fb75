/**
 * The catalogue the asset list tests (list.test.ts, list-sort-search.test.ts) read: one
 * organization holding exactly these assets (names and keys chosen for byte order, case,
 * accents, wildcards in q; future, expired, deleted and inactive ones for the axes), three
 * of them placed at two docks.
 */
import { expect } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  assetsFixture,
  daysFromNow,
  insertLocation,
  placeAsset,
} from './helpers.js';

export const BASE = '/api/v1/assets';
export const ids = (rows: Asset[]) => rows.map((a) => a.id);

export interface Catalogue {
  f: AssetsFixture;
  /** A key of the organization holding exactly the assets below. */
  api: AssetApi;
  /** The assets by name, as GET answers them (deleted ones as created). */
  a: Record<string, Asset>;
  dockA: number;
  dockB: number;
  /** The currently effective live assets, as the default list should hold them. */
  visible(): Asset[];
}

export async function catalogue(): Promise<Catalogue> {
  const a: Record<string, Asset> = {};
  const f = await assetsFixture();
  const org = await f.t.createOrg('Catalogue');
  const api = assetApi(f.t, (await org.key()).token);
  const specs: [string, Record<string, unknown>][] = [
    [
      'beta',
      {
        external_key: 'B-200',
        name: 'beta',
        description: 'Second shelf',
        tags: [{ tag_type: 'rfid', value: 'TAG-XYZ' }],
      },
    ],
    ['alphaLower', { external_key: 'a-100', name: 'Alpha', is_active: false }],
    ['alphaC', { external_key: 'C-300', name: 'alpha', metadata: { secret: 'hiddenword' } }],
    ['alphaD', { external_key: 'D-400', name: 'Alpha' }],
    ['zebra', { external_key: 'Z-1', name: 'Zebra' }],
    ['umlaut', { external_key: 'U-1', name: 'Ärger im Lager' }],
    ['accent', { external_key: 'E-1', name: 'émile' }],
    ['percent', { external_key: 'P-1', name: '100% cotton_bag' }],
    ['future', { external_key: 'F-FUTURE', name: 'Future', valid_from: daysFromNow(30) }],
    [
      'expired',
      {
        external_key: 'X-EXPIRED',
        name: 'Expired',
        valid_from: daysFromNow(-30),
        valid_to: daysFromNow(-1),
      },
    ],
    ['deleted', { external_key: 'G-DELETED', name: 'Deleted' }],
    ['deletedInactive', { external_key: 'H-DELETED', name: 'Deleted inactive', is_active: false }],
  ];
  for (const [name, body] of specs) a[name] = await api.create(body);
  for (const name of ['deleted', 'deletedInactive']) {
    expect((await api.delete(`${BASE}/${a[name]!.id}`)).statusCode).toBe(204);
  }
  const dockA = await insertLocation(f.t, org.id, 'DOCK-A');
  const dockB = await insertLocation(f.t, org.id, 'DOCK-B');
  await placeAsset(f.t, a.beta!.id, dockA);
  await placeAsset(f.t, a.alphaD!.id, dockA);
  await placeAsset(f.t, a.zebra!.id, dockB);
  for (const name of Object.keys(a)) {
    const res = await api.get(`${BASE}/${a[name]!.id}`);
    if (res.statusCode === 200) a[name] = res.json().data;
  }
  const visible = () =>
    ['beta', 'alphaLower', 'alphaC', 'alphaD', 'zebra', 'umlaut', 'accent', 'percent'].map((n) => a[n]!);
  return { f, api, a, dockA, dockB, visible };
}
