/**
 * The fixed readers of bench/soak.mjs: generic-json readers publishing at QoS 1 at a steady
 * rate, as a site's dock doors do. Each asset stays in a zone (a reader's antenna) for a
 * minute and then moves to the next one, the assets staggered over the minute, so the
 * history grows by a stay per asset per minute and the rest of the reads extend stays.
 */
import { connectAsync } from 'mqtt';
import { epc } from './soak-site.mjs';

const TICK_MS = 100;

/**
 * With `onAck`, every message carries a unique `drill` field (stored with it in the raw log)
 * and `onAck(id, ackedAt)` hears each one the broker acknowledged (bench/restore-drill.mjs).
 * `extraZones` are zones of other readers (the drill's HTTP readers) that reads may land in,
 * and `sendElsewhere(zone, read)` takes those reads.
 */
export async function startReaders({
  mqttUrl,
  logins,
  antennas,
  assets,
  readsPerSecond,
  readsPerMessage,
  onAck,
  extraZones = 0,
  sendElsewhere,
}) {
  const clients = await Promise.all(
    logins.map((l) =>
      connectAsync(mqttUrl, {
        username: l.username,
        password: l.password,
        clientId: `${l.username}-soak`,
        reconnectPeriod: 1000,
      }),
    ),
  );
  const zones = logins.length * antennas + extraZones;
  const counts = { published: 0, acked: 0, failed: 0, reads: 0 };
  const buckets = logins.map(() => []);
  const start = Date.now();
  const zoneOf = (a, now) => (a + Math.floor(((now - start) / 1000 + ((a * 7919) % 60)) / 60)) % zones;

  const flush = (r) => {
    const reads = buckets[r];
    buckets[r] = [];
    counts.published++;
    counts.reads += reads.length;
    const id = onAck && `${logins[r].topic}#${counts.published}`;
    clients[r].publish(
      logins[r].topic,
      JSON.stringify(id ? { drill: id, reads } : { reads }),
      { qos: 1 },
      (err) => {
        if (err) counts.failed++;
        else counts.acked++;
        if (!err && onAck) onAck(id, Date.now());
      },
    );
  };

  let due = 0;
  const timer = setInterval(() => {
    due += (readsPerSecond * TICK_MS) / 1000;
    const now = Date.now();
    const time = new Date(now).toISOString();
    for (; due >= 1; due--) {
      const a = Math.floor(Math.random() * assets);
      const zone = zoneOf(a, now);
      const r = Math.floor(zone / antennas);
      const read = { tag: epc(a), antenna: (zone % antennas) + 1, time };
      if (r >= logins.length) {
        sendElsewhere(zone - logins.length * antennas, read);
        continue;
      }
      buckets[r].push(read);
      if (buckets[r].length >= readsPerMessage) flush(r);
    }
  }, TICK_MS);

  return {
    counts,
    /** Stops publishing and waits (at most a minute) for every message to be answered. */
    async stop() {
      clearInterval(timer);
      buckets.forEach((b, r) => {
        if (b.length > 0) flush(r);
      });
      const deadline = Date.now() + 60_000;
      while (counts.acked + counts.failed < counts.published && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await Promise.all(clients.map((c) => c.endAsync()));
    },
  };
}
