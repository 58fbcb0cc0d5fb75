import { ConnectionGate } from '../http/connection-gate.js';

export { ConnectionGate };

/**
 * How many connections the embedded broker holds. Every TCP connection costs the process a
 * file descriptor and some memory before it has said who it is (the CONNECT may take
 * `connectTimeoutMs` to come), so without a bound one device on the site network could
 * open connections until the process runs out of descriptors, and the HTTP server and the
 * database pool with it (20,000 silent connections from one address did exactly that).
 *
 * - `total` (TAGTRAIL_MQTT_MAX_CONNECTIONS): connections open at once on all the broker's listeners; keep it well under
 *   the process's open-file limit (`ulimit -n`), which the API and the database need too.
 * - `perAddress` (TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS): connections from one remote address, so that one device cannot take
 *   every slot; readers behind one NAT address share it.
 * - `connectTimeoutMs`: how long a connection may take to send its CONNECT (aedes's own
 *   default is 30 s; a reader sends it right after the TCP handshake), and then again how
 *   long its login may take to be answered (./broker.ts: the database unreachable, or the
 *   service still starting) before the connection is closed.
 */
export interface BrokerConnectionLimits {
  total: number;
  perAddress: number;
  connectTimeoutMs: number;
}

export const BROKER_CONNECTION_LIMITS: BrokerConnectionLimits = {
  total: 1000,
  perAddress: 256,
  connectTimeoutMs: 10_000,
};
