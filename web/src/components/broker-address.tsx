import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorAlert } from './errors.js';

interface Listener {
  url: string;
  host: string;
  port: number;
}

/** GET /internal/broker: where readers publish. */
export interface Broker extends Listener {
  embedded: boolean;
  /** The embedded broker's MQTTS listener, when it has one. */
  tls: Listener | null;
}

/**
 * The broker readers must be pointed at, as the service really runs it: the embedded
 * broker may have taken another port than 1883 when that one was in use.
 */
export function BrokerAddress() {
  const [broker, setBroker] = useState<Broker | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api<{ data: Broker | null }>('/internal/broker').then((res) => setBroker(res.data), setError);
  }, []);
  if (error) return <ErrorAlert error={error} />;
  if (!broker) return null;
  return (
    <section class="card" aria-labelledby="broker-title">
      <h2 id="broker-title">MQTT broker</h2>
      <p>
        Point each reader at this broker ({broker.embedded ? "the service's own" : 'external'}) and have it
        publish to its topic below, at QoS 1.
        {broker.tls &&
          " Prefer the TLS address: the reader's MQTT password then never crosses the network in clear. Give the reader the broker's certificate, or the certificate of the authority that signed it."}
      </p>
      <dl class="facts">
        <div class="fact-whole">
          <dt>Address</dt>
          <dd class="mono" id="broker-url">
            {broker.url}
          </dd>
        </div>
        <div>
          <dt>Host</dt>
          <dd class="mono">{broker.host}</dd>
        </div>
        <div>
          <dt>Port</dt>
          <dd class="mono" id="broker-port">
            {broker.port}
          </dd>
        </div>
        {broker.tls && (
          <>
            <div class="fact-whole">
              <dt>TLS address</dt>
              <dd class="mono" id="broker-tls-url">
                {broker.tls.url}
              </dd>
            </div>
            <div>
              <dt>TLS port</dt>
              <dd class="mono" id="broker-tls-port">
                {broker.tls.port}
              </dd>
            </div>
          </>
        )}
      </dl>
    </section>
  );
}
