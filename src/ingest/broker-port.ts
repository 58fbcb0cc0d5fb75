import { DEFAULT_MQTT_PORT } from '../config.js';
import {
  BrokerPortInUseError,
  type EmbeddedBroker,
  type EmbeddedBrokerOptions,
  startEmbeddedBroker,
} from './broker.js';

/** Where readers publish, as the service reports it (start-up lines, the readers page). */
export interface BrokerAddress {
  /** `mqtt://host:port` of the embedded broker, or MQTT_URL without its credentials. */
  url: string;
  embedded: boolean;
  /** `mqtts://host:port` of the embedded broker's TLS listener, when configured. */
  tlsUrl?: string;
  /** Set when the embedded broker gave way: the default port that was taken. */
  defaultPortTaken?: number;
}

export interface PlacedBroker {
  broker: EmbeddedBroker;
  address: BrokerAddress;
}

/**
 * Starts the embedded broker on `port` when the operator set one (TAGTRAIL_MQTT_PORT): a
 * port in use then fails the start, as asked. Unset, it takes DEFAULT_MQTT_PORT, or any
 * free port when that is taken (a local Mosquitto, say), so `npm start` works anyway;
 * `defaultPort` is for tests.
 */
export async function startBrokerOnPort(
  options: Omit<EmbeddedBrokerOptions, 'port'> & { port?: number; defaultPort?: number },
): Promise<PlacedBroker> {
  const { port, defaultPort = DEFAULT_MQTT_PORT, ...rest } = options;
  if (port !== undefined) {
    const broker = await startEmbeddedBroker({ ...rest, port });
    return { broker, address: { url: broker.url, tlsUrl: broker.tlsUrl, embedded: true } };
  }
  try {
    const broker = await startEmbeddedBroker({ ...rest, port: defaultPort });
    return { broker, address: { url: broker.url, tlsUrl: broker.tlsUrl, embedded: true } };
  } catch (err) {
    if (!(err instanceof BrokerPortInUseError)) throw err;
    const broker = await startEmbeddedBroker({ ...rest, port: 0 });
    return {
      broker,
      address: { url: broker.url, tlsUrl: broker.tlsUrl, embedded: true, defaultPortTaken: defaultPort },
    };
  }
}

/** MQTT_URL as shown to people: without user name and password. */
export function externalBrokerAddress(mqttUrl: string): BrokerAddress {
  const url = new URL(mqttUrl);
  url.username = '';
  url.password = '';
  return { url: url.toString().replace(/\/$/, ''), embedded: false };
}

/**
 * The start-up lines about the broker that `serve` prints; `consuming` false: an instance
 * that takes no reader messages from MQTT_URL (TAGTRAIL_MQTT_CONSUME=false).
 */
export function describeBroker(address: BrokerAddress, consuming = true): string[] {
  if (!address.embedded) {
    return [
      consuming
        ? `MQTT: consuming reader messages from ${address.url} (MQTT_URL)`
        : `MQTT: not consuming reader messages from ${address.url} (TAGTRAIL_MQTT_CONSUME=false): the instances that consume store them`,
    ];
  }
  const lines = [`MQTT broker (embedded) listening on ${address.url}`];
  if (address.tlsUrl) lines.push(`MQTT broker (embedded) listening with TLS on ${address.tlsUrl}`);
  if (address.defaultPortTaken !== undefined) {
    lines.push(
      `MQTT port ${address.defaultPortTaken} is in use (another MQTT broker?), so the embedded broker took port ${new URL(address.url).port}; set TAGTRAIL_MQTT_PORT to choose the port`,
    );
  }
  return lines;
}
