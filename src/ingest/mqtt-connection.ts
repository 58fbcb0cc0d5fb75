import { connect, type IClientOptions, type MqttClient } from 'mqtt';

export interface ConnectMqttOptions extends IClientOptions {
  /**
   * How long the first connection may take before `connectMqtt` gives up (ms). After the
   * first connection the client reconnects on its own for as long as it lives.
   */
  initialTimeoutMs?: number;
}

/**
 * Connects an MQTT client with the settings the service uses everywhere: MQTT 3.1.1,
 * reconnect every 2 s after a drop, resubscribe on reconnect, keepalive 30 s. Resolves
 * on the first CONNACK; rejects (and ends the client) when the broker refuses the
 * connection or does not answer within `initialTimeoutMs`, so a wrong URL fails loudly
 * instead of retrying forever in the background.
 */
export function connectMqtt(
  url: string,
  clientId: string,
  options: ConnectMqttOptions = {},
): Promise<MqttClient> {
  const { initialTimeoutMs = 10_000, ...clientOptions } = options;
  return new Promise((resolve, reject) => {
    const client = connect(url, {
      clientId,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      connectTimeout: Math.min(initialTimeoutMs, 10_000),
      reconnectPeriod: 2_000,
      resubscribe: true,
      ...clientOptions,
    });
    const fail = (err: Error) => {
      cleanup();
      client.end(true);
      reject(err);
    };
    const timer = setTimeout(
      () =>
        fail(new Error(`MQTT broker at ${url} did not accept a connection within ${initialTimeoutMs} ms`)),
      initialTimeoutMs,
    );
    const onConnect = () => {
      cleanup();
      // Later socket errors are followed by a reconnect; without a listener an 'error'
      // event would throw and take the process down. Callers add their own to log them.
      client.on('error', () => undefined);
      resolve(client);
    };
    const onError = (err: Error) => fail(new Error(`MQTT connection to ${url} failed: ${err.message}`));
    function cleanup() {
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
    }
    client.on('connect', onConnect);
    client.on('error', onError);
  });
}
