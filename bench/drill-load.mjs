/**
 * The load of bench/restore-drill.mjs, each acknowledged write recorded with the time its
 * acknowledgement came: assets created through the API (known by their external key), and
 * reader messages over MQTT at QoS 1 (bench/soak-readers.mjs) and over the reader webhook,
 * known by the `drill` field they carry into the raw log. Also the receiver of the
 * service's webhook deliveries, which tells deliveries sent again from new ones.
 */
import { createServer } from 'node:http';
import { startReaders } from './soak-readers.mjs';

const TICK_MS = 20;

/** What was acknowledged: id → ack time (epoch ms), and each write's kind. */
export class Ledger {
  acks = new Map();
  kinds = new Map();
  failed = 0;
  ack(id, kind, at) {
    this.acks.set(id, at);
    this.kinds.set(id, kind);
  }
  count(kind, from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY) {
    let n = 0;
    for (const [id, at] of this.acks) if (this.kinds.get(id) === kind && at >= from && at < to) n++;
    return n;
  }
}

/**
 * Answers every delivery 204 and keeps its `webhook-id` by phase: `phase` is set to
 * 'restored' once the restored service runs, so a delivery it sends that the original
 * service had sent already is told apart from one sent for the first time.
 */
export async function webhookReceiver(port) {
  const seen = { original: new Set(), restored: new Set(), phase: 'original', received: 0, again: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      seen.received++;
      seen.lastAt = Date.now();
      if (seen.phase === 'restored' && seen.original.has(id)) seen.again++;
      seen[seen.phase].add(id);
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, seen, url: `http://127.0.0.1:${port}/hook` };
}

/**
 * Creates assets DRILL-0, DRILL-1, … at `perSecond` in all, spread over `sites` (never more
 * than `width` waiting at once: a slow service is offered less rather than a pile-up).
 */
function startWriters({ url, sites, perSecond, width, ledger }) {
  let next = 0;
  let inFlight = 0;
  let due = 0;
  const pending = new Set();
  const create = (n) => {
    const site = sites[n % sites.length];
    inFlight++;
    const request = fetch(`${url}/api/v1/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${site.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Drill ${n}`, external_key: `DRILL-${n}` }),
    })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status === 201) ledger.ack(`DRILL-${n}`, 'api', Date.now());
        else ledger.failed++;
      })
      .catch(() => ledger.failed++)
      .finally(() => {
        inFlight--;
        pending.delete(request);
      });
    pending.add(request);
  };
  const timer = setInterval(() => {
    due = Math.min(due + (perSecond * TICK_MS) / 1000, width);
    for (; due >= 1 && inFlight < width; due--) create(next++);
  }, TICK_MS);
  return async () => {
    clearInterval(timer);
    await Promise.all(pending);
  };
}

/** Reader webhook posts of what the MQTT readers' reads hand over for `hooks`' zones. */
function httpReaders({ url, hooks, antennas, perMessage, ledger }) {
  const buckets = hooks.map(() => []);
  const pending = new Set();
  let sent = 0;
  const flush = (h) => {
    const id = `hook-${hooks[h].id}#${sent++}`;
    const body = JSON.stringify({ drill: id, reads: buckets[h] });
    buckets[h] = [];
    const request = fetch(`${url}/ingest/v1/readers/${hooks[h].id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hooks[h].secret}`, 'content-type': 'application/json' },
      body,
    })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status === 204) ledger.ack(id, 'webhook', Date.now());
        else ledger.failed++;
      })
      .catch(() => ledger.failed++)
      .finally(() => pending.delete(request));
    pending.add(request);
  };
  return {
    take(zone, read) {
      const h = Math.floor(zone / antennas);
      buckets[h].push(read);
      if (buckets[h].length >= perMessage) flush(h);
    },
    async stop() {
      buckets.forEach((b, h) => {
        if (b.length > 0) flush(h);
      });
      await Promise.all(pending);
    },
  };
}

/**
 * The whole load on `sites` (from bench/soak-site.mjs, with `logins` and `hooks`). Returns
 * `stop()`, which stops it and waits until every write sent is answered.
 */
export async function startLoad({
  url,
  mqttUrl,
  sites,
  antennas,
  assets,
  writes,
  reads,
  perMessage,
  ledger,
}) {
  const hooks = httpReaders({ url, hooks: sites.flatMap((s) => s.hooks), antennas, perMessage, ledger });
  const readers = await startReaders({
    mqttUrl,
    logins: sites.flatMap((s) => s.logins),
    antennas,
    assets,
    readsPerSecond: reads,
    readsPerMessage: perMessage,
    onAck: (id, at) => ledger.ack(id, 'mqtt', at),
    extraZones: sites.reduce((n, s) => n + s.hooks.length, 0) * antennas,
    sendElsewhere: (zone, read) => hooks.take(zone, read),
  });
  const stopWriters = startWriters({ url, sites, perSecond: writes, width: 32, ledger });
  return {
    readers: readers.counts,
    async stop() {
      await Promise.all([readers.stop(), hooks.stop(), stopWriters()]);
    },
  };
}
