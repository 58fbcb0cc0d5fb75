/**
 * The whole path in the running service: a reader publishes over MQTT to the embedded
 * broker, ingest stores the read and its asset.moved event, the service's own dispatcher
 * and delivery worker send it, signed, to a local receiver (allowed by
 * TAGTRAIL_WEBHOOK_ALLOW_PRIVATE).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/events/signing.js';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { subscribeToMoves } from '../helpers/move-subscription.js';
import { startTestService } from '../helpers/service.js';
import { genericJson, ingestFixture, publisher, waitFor } from '../ingest/helpers.js';
import { startReceiver } from './receiver.js';

describe('asset.moved for an MQTT read reaches a receiver, signed', () => {
  let t: TestApp;
  let running: RunningService;
  beforeAll(async () => {
    t = await buildTestApp();
    running = await startTestService({
      DATABASE_URL: t.database.url,
      TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
  });
  afterAll(async () => {
    await running?.stop();
    await t?.close();
  });

  it('publishes two reads at two antennas; the receiver gets first_seen then moved with the reader and antenna', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const gate = await f.location();
    const tag = 'E2000000000000000000B001';
    const asset = await f.asset(tag);
    const { reader, topic, mqtt } = await f.reader('generic-json', [
      [1, dock],
      [2, gate],
    ]);
    const rx = await startReceiver();
    try {
      const { secret } = await subscribeToMoves(t.database.db, f.orgId, rx.url);
      await running.ingest.serving(topic);
      const client = await publisher(running.mqttUrl, { login: mqtt });
      const t0 = Date.now() - 60_000;
      try {
        await client.publishAsync(topic, genericJson([[tag, 1, new Date(t0).toISOString()]]), { qos: 1 });
        await client.publishAsync(topic, genericJson([[tag, 2, new Date(t0 + 1000).toISOString()]]), {
          qos: 1,
        });
      } finally {
        await client.endAsync();
      }
      await waitFor(
        async () => rx.received.length,
        (n) => n >= 2,
        30_000,
      );
      for (const r of rx.received) expect(verifySignature(secret, r.headers, r.body)).toBe(true);
      const bodies = rx.received.map((r) => JSON.parse(r.body));
      expect(bodies.map((b) => b.type)).toEqual(['asset.first_seen', 'asset.moved']);
      expect(bodies[1].data).toMatchObject({
        asset_id: asset,
        from_location_id: dock,
        location_id: gate,
        observed_at: new Date(t0 + 1000).toISOString(),
        source: { type: 'reader', reader_id: reader.id, antenna: 2 },
      });
    } finally {
      await rx.close();
    }
  });
});
