import { connectMqtt } from '../../src/ingest/mqtt-connection.js';
import type { MqttCredentials } from '../../src/ingest/readers-service.js';
import { readerMessage, unique, until } from './load.js';

/**
 * Publishes probe messages to `topic` until one is stored: until then the service may not
 * serve the topic yet (a new reader is picked up within seconds), and a message on a topic
 * nobody serves is acknowledged by a broker without being stored. `login`: the reader's
 * credentials, for the embedded broker.
 */
export async function publishUntilStored(
  mqttUrl: string,
  topic: string,
  stored: () => Promise<Set<string>>,
  login?: MqttCredentials,
): Promise<void> {
  const client = await connectMqtt(mqttUrl, unique(login?.username ?? 'tagtrail-outage-probe'), {
    reconnectPeriod: 200,
    ...(login ? { username: login.username, password: login.password } : {}),
  });
  try {
    const probes: string[] = [];
    let last = 0;
    await until(async () => {
      if (Date.now() - last > 1_000) {
        const probe = readerMessage(unique('probe'));
        probes.push(probe);
        last = Date.now();
        await client.publishAsync(topic, probe, { qos: 1 });
      }
      const have = await stored();
      return probes.some((p) => have.has(p));
    }, `reader topic ${topic} served`);
  } finally {
    await client.endAsync();
  }
}
