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

/** One listener's address; a wildcard host of the embedded broker replaced by `hostname`. */
function listenerView(address: string, embedded: boolean, hostname: string) {
  const url = new URL(address);
  if (embedded && WILDCARD_HOSTS.has(url.hostname)) url.hostname = hostname;
  const port = url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
  return {
    url: url.toString().replace(/\/$/, ''),
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
  };
}

/**
 * The broker address for the readers page. A broker bound to every interface
 * (HOST=0.0.0.0) is named by `hostname`, the name this machine is reached by, which is more
 * use to whoever configures a reader than `0.0.0.0`.
 */
export function brokerView(address: BrokerAddress, hostname: string) {
  return {
    ...listenerView(address.url, address.embedded, hostname),
    embedded: address.embedded,
    tls: address.tlsUrl ? listenerView(address.tlsUrl, address.embedded, hostname) : null,
  };
}

/** Where readers publish: the real address of the broker, after any port it had to give way on. */
export const brokerRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/broker',
      { config: { role: 'viewer' }, schema: { response: { 200: DataEnvelope(Nullable(BrokerSchema)) } } },
      // The operator's TAGTRAIL_PUBLIC_URL names the machine; behind a proxy the Host header
      // may be an internal name. Unset, the name the browser used is the best guess there is.
      async (request) => ({
        data: s.broker ? brokerView(s.broker, s.publicAddress.configuredHostname ?? request.hostname) : null,
      }),
    );
  };
