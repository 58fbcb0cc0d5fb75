/**
 * An RFID or BLE tag is one tag however its value is spelled (docs/api-decisions.md, "A tag
 * is one tag however it is spelled"; migration 0064): ingest finds the tag a reader saw by
 * its match key (case, separators and leading zeros ignored), so a second spelling of a
 * live tag is 409 on every way in (create, the tags sub-resource, a location's tags, an
 * import), even when two attaches race, and a key two live tags still share resolves to
 * the earliest attached.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetsByTagKeys, matchKey } from '../../src/tracking/resolve.js';
import { type AssetApi, type AssetsFixture, assetsFixture, lockHolder } from '../assets/helpers.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';

/** A fresh EPC in upper-case hex. */
const epc = () => `E280${randomBytes(6).toString('hex').toUpperCase()}`;
/** The same EPC as some readers and spreadsheets write it: lower case, colon-separated, a leading zero. */
const respelled = (value: string) => `0${value.toLowerCase().match(/../g)!.join(':')}`;

describe('a tag is one tag however it is spelled', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  const tagsOf = async (id: number) => (await api.get(`/api/v1/assets/${id}`)).json().data.tags as unknown[];

  it('attaching another spelling of a live RFID or BLE tag is 409 naming its holder and spelling; nothing is attached', async () => {
    for (const tag_type of ['rfid', 'ble'] as const) {
      const value = epc();
      const holder = await api.create({ tags: [{ tag_type, value }] });
      const other = await api.create({});
      const res = await api.post(`/api/v1/assets/${other.id}/tags`, { tag_type, value: respelled(value) });
      expectErrorEnvelope(res, { status: 409 });
      expect(res.json().error.detail).toBe(
        `tag ${tag_type}:${respelled(value)} is already attached to asset ${holder.id} as ${tag_type}:${value}`,
      );
      expect(await tagsOf(other.id)).toEqual([]);
    }
  });

  it('a create whose tags hold two spellings of one tag is 409 and creates nothing', async () => {
    const value = epc();
    const name = `two-spellings-${value}`;
    const res = await api.post('/api/v1/assets', {
      name,
      tags: [
        { tag_type: 'rfid', value },
        { tag_type: 'rfid', value: respelled(value) },
      ],
    });
    expectErrorEnvelope(res, { status: 409 });
    expect(res.json().error.detail).toBe(
      `tag rfid:${respelled(value)} is the same tag as rfid:${value} in the request`,
    );
    const list = await api.get(`/api/v1/assets?q=${encodeURIComponent(name)}`);
    expect(list.json().data).toEqual([]);
  });

  it('a location tag counts too: an asset cannot take another spelling of it', async () => {
    const value = epc();
    const loc = await api.post('/api/v1/locations', {
      name: `dock ${value}`,
      tags: [{ tag_type: 'rfid', value }],
    });
    expect(loc.statusCode).toBe(201);
    const res = await api.post('/api/v1/assets', {
      name: 'x',
      tags: [{ tag_type: 'rfid', value: value.toLowerCase() }],
    });
    expectErrorEnvelope(res, { status: 409 });
    expect(res.json().error.detail).toContain(`location ${loc.json().data.id}`);
  });

  it('barcodes stay exact, and another tag_type is another tag', async () => {
    const value = epc();
    await api.create({ tags: [{ tag_type: 'barcode', value }] });
    expect(
      (await api.create({ tags: [{ tag_type: 'barcode', value: value.toLowerCase() }] })).tags,
    ).toHaveLength(1);
    expect(
      (await api.create({ tags: [{ tag_type: 'rfid', value: value.toLowerCase() }] })).tags,
    ).toHaveLength(1);
    expect((await api.create({ tags: [{ tag_type: 'ble', value }] })).tags).toHaveLength(1);
  });

  it('once the tag is detached another spelling can be attached elsewhere', async () => {
    const value = epc();
    const first = await api.create({ tags: [{ tag_type: 'rfid', value }] });
    const tag = (first.tags as Array<{ id: number }>)[0]!;
    expect((await api.delete(`/api/v1/assets/${first.id}/tags/${tag.id}`)).statusCode).toBe(204);
    expect((await api.create({ tags: [{ tag_type: 'rfid', value: respelled(value) }] })).tags).toHaveLength(
      1,
    );
  });

  it('two attaches of one tag in two spellings at once: the second waits for the first and is refused', async () => {
    const [a, b] = [await api.create({}), await api.create({})];
    const value = epc();
    const one = await lockHolder(f.t);
    const two = await lockHolder(f.t);
    try {
      const insert = (asset: number, v: string) =>
        `INSERT INTO tags (org_id, asset_id, tag_type, value) VALUES (${f.org.id}, ${asset}, 'rfid', '${v}')`;
      await one.query('BEGIN');
      await one.query(insert(a.id, value));
      await two.query('BEGIN');
      const pid = (await two.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const second = two.query(insert(b.id, respelled(value))).then(
        () => 'inserted',
        (err: { code?: string; constraint?: string }) => `${err.code} ${err.constraint}`,
      );
      // The second insert must meet the first's lock, not run past the uncommitted row.
      let settled: string | undefined;
      void second.then((s) => {
        settled = s;
      });
      for (let i = 0; i < 200 && settled === undefined; i++) {
        const { rows } = await one.query<{ waiting: boolean }>(
          `SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1`,
          [pid],
        );
        if (rows[0]?.waiting) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(settled).toBeUndefined();
      await one.query('COMMIT');
      expect(await second).toBe('23505 tags_match_key_live');
      await two.query('ROLLBACK');
    } finally {
      await one.end();
      await two.end();
    }
    expect(await tagsOf(b.id)).toEqual([]);
  });

  it('a key two live tags still share (attached before the rule) resolves to the earliest attached', async () => {
    const value = epc();
    const [older, newer] = [await api.create({}), await api.create({})];
    const owner = await lockHolder(f.t);
    try {
      // As migration 0064 leaves a pair it found: the later one marked, out of the unique index.
      for (const [asset, v, shared] of [
        [older.id, value, false],
        [newer.id, respelled(value), true],
      ] as const) {
        await owner.query(
          `INSERT INTO tags (org_id, asset_id, tag_type, value, shares_match_key) VALUES ($1, $2, 'rfid', $3, $4)`,
          [f.org.id, asset, v, shared],
        );
      }
    } finally {
      await owner.end();
    }
    const key = matchKey('rfid', value);
    for (let i = 0; i < 3; i++) {
      const found = await f.t.database.db.withOrg(f.org.id, (tx) => assetsByTagKeys(tx, f.org.id, [key]));
      expect(found.get(key)).toBe(older.id);
    }
  });
});
