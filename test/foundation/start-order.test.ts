/**
 * The start compiles every route's schemas (Fastify does it in ready(), synchronously, for
 * seconds on a loaded machine: 1.6 s for one instance on 2 cores, 7 s with three starting
 * at once). Background work started before that had its database connections wait out
 * their 5 s timeout on the blocked event loop, and every start logged a burst of
 * "database unavailable" warnings. The background work starts once the server is ready.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EventsRuntime } from '../../src/events/runtime.js';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { MqttConsumer } from '../../src/ingest/mqtt-consumer.js';
import { PeriodicPass } from '../../src/periodic-pass.js';
import { type RunningService, startService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRET_KEYS } from '../helpers/secrets.js';
import { unique } from '../ingest/helpers.js';

const server = vi.hoisted(() => ({ ready: false }));

vi.mock('../../src/app.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/app.js')>();
  return {
    ...original,
    buildServer: async (...args: Parameters<typeof original.buildServer>) => {
      const app = await original.buildServer(...args);
      app.addHook('onReady', async () => {
        server.ready = true;
      });
      return app;
    },
  };
});

describe('starting the service', () => {
  let t: TestApp;
  let broker: EmbeddedBroker;
  let running: RunningService | undefined;
  const started: Array<{ what: string; serverReady: boolean }> = [];

  beforeAll(async () => {
    t = await buildTestApp();
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    for (const [what, proto] of [
      ['periodic pass', PeriodicPass.prototype],
      ['events runtime', EventsRuntime.prototype],
      ['MQTT consumer', MqttConsumer.prototype],
    ] as const) {
      const original = proto.start;
      vi.spyOn(proto, 'start').mockImplementation(function (this: never, ...args: never[]) {
        started.push({ what, serverReady: server.ready });
        return (original as (...a: never[]) => never).apply(this, args);
      });
    }
    // The test app above is built (and made ready) by the same buildServer.
    server.ready = false;
    running = await startService(
      loadConfig({
        TAGTRAIL_SECRET_KEYS: TEST_SECRET_KEYS,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: t.database.url,
        MQTT_URL: broker.url,
        TAGTRAIL_INSTANCE: unique('start-order'),
        LOG_LEVEL: 'silent',
      }),
    );
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await running?.stop();
    await broker?.stop();
    await t?.close();
  });

  it('starts the background work and ingest only once the server has compiled its routes', () => {
    expect(started.map((s) => s.what)).toEqual(
      expect.arrayContaining(['periodic pass', 'events runtime', 'MQTT consumer']),
    );
    expect(started.filter((s) => !s.serverReady)).toEqual([]);
  });
});
