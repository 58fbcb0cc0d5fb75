import { afterEach, describe, expect, it } from 'vitest';
import { LeanPublisher, preparePublish } from '../../bench/lean-publisher.js';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';

// The ingest bench's readers: what they publish must arrive whole, once and in order, and a
// broker that drops them must fail the bench rather than hang it.
describe('bench LeanPublisher', () => {
  let broker: EmbeddedBroker | undefined;
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  const login = { clientId: 'lean-test', username: 'reader', password: 'secret' };

  /** A publisher connected to a broker that fails every message, which drops the connection. */
  async function publisherOfRefusingBroker(): Promise<LeanPublisher> {
    broker = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      onPublish: (_topic, _payload, _sender, done) => done(new Error('refused')),
    });
    return LeanPublisher.connect(broker.url, login);
  }

  it('delivers more messages than there are packet identifiers, each once and in order', async () => {
    const received: string[] = [];
    broker = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      onPublish: (topic, payload, _sender, done) => {
        received.push(`${topic} ${payload.toString()}`);
        done(null);
      },
    });
    const publisher = await LeanPublisher.connect(broker.url, login);
    const count = 70_000;
    const sent = Array.from({ length: count }, (_, i) => `{"n":${i}}`);
    await Promise.all(sent.map((p) => publisher.publish(preparePublish('site/reader-1', p))));
    await publisher.end();
    expect(received).toHaveLength(count);
    expect(received).toEqual(sent.map((p) => `site/reader-1 ${p}`));
  }, 60_000);

  it('fails the messages in flight when the broker drops the connection', async () => {
    const publisher = await publisherOfRefusingBroker();
    await expect(publisher.publish(preparePublish('site/reader-1', '{}'))).rejects.toThrow(/closed/);
    await expect(publisher.publish(preparePublish('site/reader-1', '{}'))).rejects.toThrow(/closed/);
  });

  it('fails the messages waiting for a packet identifier too when the connection drops', async () => {
    const publisher = await publisherOfRefusingBroker();
    // More than the 65,535 identifiers: the rest wait for one, and must not wait forever.
    const settled = await Promise.allSettled(
      Array.from({ length: 70_000 }, () => publisher.publish(preparePublish('site/reader-1', '{}'))),
    );
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(0);
  });

  it('fails to connect when the broker refuses the login', async () => {
    broker = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      access: {
        authenticate: async () => {
          throw Object.assign(new Error('bad login'), { returnCode: 4 });
        },
      } as never,
    });
    await expect(LeanPublisher.connect(broker.url, login)).rejects.toThrow(
      /refused the connection \(CONNACK return code 4\)/,
    );
  });
});
