/**
 * Moves are stored as events only for an organization with an enabled endpoint that wants
 * their type (src/events/move-subscriptions.ts); the live views hear of every move from its
 * writer, and an endpoint created while moves are being written receives those committed
 * after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchEvents, type LiveChange } from '../../src/events/dispatcher.js';
import { LiveHub } from '../../src/events/live-hub.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { ingestFixture, unique, waitFor } from '../ingest/helpers.js';

let t: TestApp;
let webhooks: WebhookService;
beforeAll(async () => {
  t = await buildTestApp();
  webhooks = new WebhookService(t.database.db, TEST_SECRETS, { allowPrivate: true });
});
afterAll(async () => {
  await t?.close();
});

const URL = 'http://127.0.0.1:9/hook';

async function typesOf(orgId: number, subject: string): Promise<string[]> {
  const { rows } = await t.database.db.pool.query<{ type: string }>(
    'SELECT type FROM events WHERE org_id = $1 AND subject = $2 ORDER BY id',
    [orgId, subject],
  );
  return rows.map((r) => r.type);
}

async function scene() {
  const f = await ingestFixture(t);
  const [dock, shelf, gate] = [await f.location(), await f.location(), await f.location()];
  const asset = await f.asset(unique('T'));
  const base = Date.now() - 600_000;
  const store = (locationId: number, s: number) =>
    t.database.db.withOrg(f.orgId, (tx) =>
      storeSightings(tx, f.orgId, [{ assetId: asset, locationId, at: base + s * 1000 }]),
    );
  return { f, dock, shelf, gate, asset, store, subject: `asset:${asset}` };
}

/** A live hub listening to the organization: what it heard, and how to stop it. */
async function listen(orgId: number): Promise<{ heard: LiveChange[]; close(): Promise<void> }> {
  const hub = new LiveHub({ connectionString: t.database.url }, 20);
  const heard: LiveChange[] = [];
  const stop = hub.subscribe(orgId, (c) => heard.push(c));
  await hub.ready();
  return {
    heard,
    async close() {
      stop();
      await hub.close();
    },
  };
}

describe('moves as events', () => {
  it('are not stored without an endpoint, but still reach the live views when they commit', async () => {
    const { f, dock, shelf, asset, store, subject } = await scene();
    const { heard, close } = await listen(f.orgId);
    try {
      await store(dock, 0);
      await store(shelf, 1);
      await waitFor(
        async () => heard.length,
        (n) => n >= 2,
      );
      expect(heard).toEqual([
        {
          org_id: f.orgId,
          types: ['asset.first_seen'],
          asset_ids: [asset],
          location_ids: [dock],
          truncated: false,
        },
        {
          org_id: f.orgId,
          types: ['asset.moved'],
          asset_ids: [asset],
          location_ids: [dock, shelf],
          truncated: false,
        },
      ]);
      expect(await typesOf(f.orgId, subject)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('a stored move is told to the live views once, by its writer, not again by the dispatcher', async () => {
    const { f, dock, shelf, store, subject } = await scene();
    await webhooks.create(f.orgId, { url: URL, event_types: ['asset.first_seen', 'asset.moved'] });
    const { heard, close } = await listen(f.orgId);
    try {
      await store(dock, 0);
      await store(shelf, 1);
      expect(await typesOf(f.orgId, subject)).toEqual(['asset.first_seen', 'asset.moved']);
      while ((await dispatchEvents(t.database.db)) > 0) {}
      // A notice of another kind after the dispatch: everything before it has arrived.
      await t.database.db.pool.query("SELECT pg_notify('tagtrail_events', $1)", [
        JSON.stringify({
          org_id: f.orgId,
          types: ['marker'],
          asset_ids: [],
          location_ids: [],
          truncated: false,
        }),
      ]);
      await waitFor(
        async () => heard.some((c) => c.types.includes('marker')),
        (done) => done,
      );
      expect(heard.map((c) => c.types)).toEqual([['asset.first_seen'], ['asset.moved'], ['marker']]);
    } finally {
      await close();
    }
  });

  it('only the types an enabled, undeleted endpoint names are stored', async () => {
    const { f, dock, shelf, gate, store, subject } = await scene();
    const disabled = await webhooks.create(f.orgId, {
      url: URL,
      event_types: ['asset.first_seen'],
      enabled: false,
    });
    const removed = await webhooks.create(f.orgId, { url: URL, event_types: ['asset.first_seen'] });
    await webhooks.remove(f.orgId, removed.endpoint.id);
    await webhooks.create(f.orgId, { url: URL, event_types: ['asset.moved'] });
    await store(dock, 0);
    await store(shelf, 1);
    expect(await typesOf(f.orgId, subject)).toEqual(['asset.moved']);
    // Enabling the first-seen endpoint again: the next first sighting is stored.
    await webhooks.update(f.orgId, disabled.endpoint.id, { enabled: true });
    const other = await f.asset(unique('T'));
    await t.database.db.withOrg(f.orgId, (tx) =>
      storeSightings(tx, f.orgId, [{ assetId: other, locationId: gate, at: Date.now() - 1000 }]),
    );
    expect(await typesOf(f.orgId, `asset:${other}`)).toEqual(['asset.first_seen']);
  });

  it("another organization's endpoint does not make this one's moves stored", async () => {
    const mine = await scene();
    const theirs = await ingestFixture(t);
    await webhooks.create(theirs.orgId, { url: URL, event_types: ['asset.first_seen', 'asset.moved'] });
    await mine.store(mine.dock, 0);
    expect(await typesOf(mine.f.orgId, mine.subject)).toEqual([]);
  });

  it('an endpoint created while moves are being written waits for them, and receives every move committed after it', async () => {
    const { f, dock, shelf, gate, store, subject } = await scene();
    const early = await f.asset(unique('T'));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let placed!: () => void;
    const inside = new Promise<void>((resolve) => {
      placed = resolve;
    });
    // A transaction that has placed a first sighting (no endpoint yet) and not committed.
    const writing = t.database.db.withOrg(f.orgId, async (tx) => {
      await storeSightings(tx, f.orgId, [{ assetId: early, locationId: dock, at: Date.now() - 5000 }]);
      placed();
      await held;
    });
    await inside;
    const creating = webhooks.create(f.orgId, { url: URL, event_types: ['asset.first_seen', 'asset.moved'] });
    let created = false;
    void creating.then(() => {
      created = true;
    });
    // The create waits on the organization's moves lock (class 7120), held by the writer.
    await waitFor(
      async () =>
        (
          await t.database.db.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 7120 AND objid = $1 AND NOT granted",
            [f.orgId],
          )
        ).rows[0]!.n,
      (n) => n === 1,
    );
    expect(created).toBe(false);
    finish();
    await writing;
    await creating;
    await store(shelf, 1);
    await store(gate, 2);
    expect(await typesOf(f.orgId, subject)).toEqual(['asset.first_seen', 'asset.moved']);
    // The writer committed before the endpoint did: its move is not the endpoint's.
    expect(await typesOf(f.orgId, `asset:${early}`)).toEqual([]);
  });
});
