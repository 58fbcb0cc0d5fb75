import type { Reader } from '../api.js';
import { formatDateTime } from '../format.js';

/** The connection as a badge: the embedded broker knows it; with an external broker nobody here does. */
function Connection({ connected }: { connected: boolean | null }) {
  if (connected === null) return <span class="muted">unknown (external broker)</span>;
  return connected ? (
    <span class="badge badge-active">connected</span>
  ) : (
    <span class="badge badge-revoked">not connected</span>
  );
}

const perMinute = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/** How a reader is doing now: connected or not, reads and errors in the last minute, its last error. */
export function ReaderHealth({ reader }: { reader: Reader }) {
  const { health } = reader;
  return (
    <>
      <div>
        <dt>MQTT connection</dt>
        <dd>
          <Connection connected={health.connected} />
        </dd>
      </div>
      <div>
        <dt>Reads per minute</dt>
        <dd class="num">{perMinute(health.reads_per_minute)}</dd>
      </div>
      <div>
        <dt>Errors per minute</dt>
        <dd class="num">{perMinute(health.errors_per_minute)}</dd>
      </div>
      <div>
        <dt>Last error</dt>
        <dd>{formatDateTime(health.last_error_at, 'none')}</dd>
      </div>
    </>
  );
}
