/**
 * The embedded broker's own ceiling: the bench's messages, from the same publishers'
 * child, through an embedded broker (src/ingest/broker.ts) whose `onPublish` stores
 * nothing. What is left of the two cores for the service and PostgreSQL is what this
 * leaves: a read rate above it cannot be reached through this broker, whatever ingest
 * does. It is the bound that matters with few reads per message, where the MQTT packet,
 * its acknowledgement and the publishers' client cost more than the reads' rows.
 */
import { startEmbeddedBroker } from '../src/ingest/broker.js';
import type { BenchReaders } from './harness.js';
import { type BenchMessage, startPublishers } from './ingest-publishers.js';

export interface BrokerCeiling {
  /** Seconds from the first publish until every message was acknowledged. */
  seconds: number;
  /** CPU of this process (the broker) and of the publishers' child, in microseconds. */
  brokerCpuMicros: number;
  publishersCpuMicros: number;
}

export async function brokerCeiling(options: {
  readers: BenchReaders;
  messages: BenchMessage[];
  window: number;
}): Promise<BrokerCeiling> {
  // No access control: logging in happens once per connection, outside the measured window.
  const broker = await startEmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    onPublish: (_topic, _payload, _sender, done) => done(null),
  });
  try {
    const publishers = await startPublishers({
      mqttUrl: broker.url,
      readers: options.readers,
      messages: options.messages,
      window: options.window,
      // A ceiling: as fast as the broker takes them, whatever rate the service's run had.
      rate: null,
    });
    try {
      const started = process.hrtime.bigint();
      const cpuAtStart = process.cpuUsage();
      const { cpuMicros: publishersCpuMicros } = await publishers.publish();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = process.cpuUsage(cpuAtStart);
      return { seconds, brokerCpuMicros: cpu.user + cpu.system, publishersCpuMicros };
    } finally {
      await publishers.end();
    }
  } finally {
    await broker.stop();
  }
}
