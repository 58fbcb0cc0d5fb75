import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DataEnvelope, Nullable } from '../../http/schemas/common.js';
import type { InternalServices } from '../../internal-services.js';
import type { BrokerAddress } from '../broker-port.js';

const ListenerSchema = Type.Object({
  /** `mqtt://host:port` (or `mqtts://`) as a reader on the network reaches it. */
  url: Type.String(),
  host: Type.String(),
  port: Type.Integer(),
});

export const BrokerSchema = Type.Object({
  ...ListenerSchema.properties,
  /** The service's own broker, rather than MQTT_URL. */
  embedded: Type.Boolean(),
  /** The embedded broker's MQTTS listener (TAGTRAIL_MQTT_TLS_CERT), else null. */
  tls: Nullable(ListenerSchema),
});

const WILDCARD_HOSTS = new Set(['0.0.0.0', '[::]', '::']);
const DEFAULT_PORTS: Record<string, number> = { 'mqtt:': 1883, 'tcp:': 1883, 'mqtts:': 8883 };

/** One listener's address; a wildcard host of the embedded broker replaced by the page's. */
function listenerView(address: string, embedded: boolean, requestHostname: string) {
  const url = new URL(address);
  if (embedded && WILDCARD_HOSTS.has(url.hostname)) url.hostname = requestHostname;
  const port = url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
  return {
    url: url.toString().replace(/\/$/, ''),
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
  };
}

/**
 * The broker address for the readers page. A broker bound to every interface
 * (HOST=0.0.0.0) is reached at whatever name the browser reached this service by, which is
 * more use to whoever configures a reader than `0.0.0.0`.
 */
export function brokerView(address: BrokerAddress, requestHostname: string) {
  return {
    ...listenerView(address.url, address.embedded, requestHostname),
    embedded: address.embedded,
    tls: address.tlsUrl ? listenerView(address.tlsUrl, address.embedded, requestHostname) : null,
  };
}

/** Where readers publish: the real address of the broker, after any port it had to give way on. */
export const brokerRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/broker',
      { config: { role: 'viewer' }, schema: { response: { 200: DataEnvelope(Nullable(BrokerSchema)) } } },
      async (request) => ({ data: s.broker ? brokerView(s.broker, request.hostname) : null }),
    );
  };
