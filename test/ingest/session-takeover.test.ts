/**
 * Two instances that connect to one broker with the same MQTT client id (both without
 * TAGTRAIL_INSTANCE) take the consumer's session from each other at every reconnect; the
 * consumer says so in the log instead of logging "connected" every few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { type IngestLogger, silentLogger } from '../../src/ingest/limiter.js';
import { MqttConsumer } from '../../src/ingest/mqtt-consumer.js';
import {
  SessionTakeoverWatch,
  TAKEOVER_CLOSES,
  TAKEOVER_SHORT_MS,
} from '../../src/ingest/session-takeover.js';
import { directoryOf, fakeIngest } from '../helpers/fake-ingest.js';
import { unique, waitFor } from './helpers.js';

const warnings = () => {
  const lines: Array<{ details: object; message: string }> = [];
  const logger: IngestLogger = {
    ...silentLogger,
    warn: (details, message = '') => lines.push({ details, message }),
  };
  return { lines, logger };
};

let broker: EmbeddedBroker;
beforeAll(async () => {
  broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
});
afterAll(() => broker?.stop());

describe('a consumer whose client id another client uses', () => {
  it('warns that the session is being taken over and names TAGTRAIL_INSTANCE', async () => {
    const clientId = unique('tagtrail-ingest-test');
    const topic = unique('t');
    const logs = [warnings(), warnings()];
    const consumers = await Promise.all(
      logs.map(async ({ logger }) => {
        const directory = await directoryOf([topic]);
        const c = new MqttConsumer({
          url: broker.url,
          clientId,
          directory,
          ingest: fakeIngest(),
          logger,
          clientOptions: { reconnectPeriod: 100 },
        });
        return { c, directory };
      }),
    );
    try {
      for (const { c } of consumers) c.start();
      const taken = () => logs.flatMap((l) => l.lines).filter((l) => l.message.includes('TAGTRAIL_INSTANCE'));
      await waitFor(
        async () => taken().length,
        (n) => n > 0,
        10_000,
      );
      expect(taken()[0]!.message).toContain(clientId);
    } finally {
      for (const { c, directory } of consumers) {
        await c.stop();
        await directory.stop();
      }
    }
  }, 20_000);

  it('a consumer alone, stopped or reconnecting by itself, does not warn', async () => {
    const directory = await directoryOf([unique('t')]);
    const { lines, logger } = warnings();
    const c = new MqttConsumer({
      url: broker.url,
      clientId: unique('tagtrail-ingest-test'),
      directory,
      ingest: fakeIngest(),
      logger,
      clientOptions: { reconnectPeriod: 100 },
    });
    c.start();
    await c.ready();
    await c.stop();
    await directory.stop();
    expect(lines).toEqual([]);
  });
});

describe('SessionTakeoverWatch', () => {
  const watch = () => {
    let now = 0;
    const { lines, logger } = warnings();
    const w = new SessionTakeoverWatch('tagtrail-ingest', logger, () => now);
    return { w, lines, tick: (ms: number) => (now += ms) };
  };

  it(`warns once ${TAKEOVER_CLOSES} connections in a row were closed soon after they were accepted`, () => {
    const { w, lines, tick } = watch();
    for (let i = 0; i < TAKEOVER_CLOSES; i++) {
      expect(lines).toEqual([]);
      w.accepted();
      tick(2_000);
      w.closed();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toContain('tagtrail-ingest');
  });

  it('does not count its own closes, closes before an accept, or a long connection', () => {
    const { w, lines, tick } = watch();
    for (let i = 0; i < 10; i++) {
      w.accepted();
      tick(100);
      w.ownClose();
      w.closed();
      w.closed(); // refused before CONNACK: nothing was accepted
    }
    for (let i = 0; i < TAKEOVER_CLOSES - 1; i++) {
      w.accepted();
      tick(100);
      w.closed();
    }
    // A connection that lasted starts the count again (a broker restart, not a takeover).
    w.accepted();
    tick(TAKEOVER_SHORT_MS);
    w.closed();
    w.accepted();
    tick(100);
    w.closed();
    expect(lines).toEqual([]);
  });
});
