/**
 * /api/events.schema.json describes every event the service writes: real events of each
 * type, as a webhook sends them, validate against it; a wrong payload does not.
 */
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { sweepNotSeen } from '../../src/events/not-seen.js';
import { EVENT_TYPES, eventBody, type StoredEvent } from '../../src/events/outbox.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { subscribeToMoves } from '../helpers/move-subscription.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

describe('the event JSON Schema', () => {
  it('is served beside the OpenAPI document and validates a real event of every type', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/events.schema.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/schema\+json/);
    const validate = new Ajv({ strict: false, validateFormats: false }).compile(res.json());

    const f = await ingestFixture(t);
    // Moves are stored only for an organization whose endpoints want them.
    await subscribeToMoves(t.database.db, f.orgId);
    const [a, b] = [await f.location(), await f.location()];
    const now = Date.now();
    await sweepNotSeen(t.database.db, 3600_000, now - 3 * 3600_000);
    const asset = await t.services.assets.create(cliCaller(f.orgId), {
      name: 'Crate',
      tags: [{ tag_type: 'rfid', value: unique('E2') }],
    });
    const records = (location: number, at: number) =>
      t.services.ingest.records(
        f.orgId,
        [{ observedAt: at, asset: { id: asset.id }, location: { id: location } }],
        'handheld',
        '{}',
      );
    await records(a, now - 2 * 3600_000);
    await records(b, now - 2 * 3600_000 + 1000);
    await sweepNotSeen(t.database.db, 3600_000, now);
    await t.services.assets.update(cliCaller(f.orgId), asset.id, { name: 'Crate 2' });
    const loc = await t.services.locations.create(cliCaller(f.orgId), { name: 'Room' });
    await t.services.locations.update(cliCaller(f.orgId), loc.id, { name: 'Room 2' });
    const tag = await t.services.tags.attach(
      cliCaller(f.orgId),
      { kind: 'location', id: loc.id },
      { tag_type: 'barcode', value: 'R2' },
    );
    await t.services.tags.detach(cliCaller(f.orgId), { kind: 'location', id: loc.id }, tag.id);
    await t.services.locations.delete(cliCaller(f.orgId), loc.id);
    const moved = await t.services.assets.create(cliCaller(f.orgId), { name: 'Gone' });
    await t.services.assets.remove(cliCaller(f.orgId), moved.id);

    const { rows } = await t.database.db.pool.query<StoredEvent>(
      'SELECT id, org_id, type, occurred_at, payload FROM events WHERE org_id = $1 ORDER BY id',
      [f.orgId],
    );
    expect(new Set(rows.map((r) => r.type))).toEqual(new Set(EVENT_TYPES));
    for (const row of rows) {
      const body = JSON.parse(eventBody(row));
      expect(validate(body), `${row.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const moveEvent = JSON.parse(eventBody(rows.find((r) => r.type === 'asset.moved')!));
    delete moveEvent.data.location_id;
    expect(validate(moveEvent)).toBe(false);
  });
});
