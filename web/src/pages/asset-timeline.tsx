import { useEffect } from 'preact/hooks';
import type { HistoryRow } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { isEmpty, Pager, usePaged } from '../components/paging.js';
import { describeStay, formatDateTime } from '../format.js';

/** The asset's stays, newest first, with the time spent at each place. */
export function Timeline({ assetId, version }: { assetId: number; version: number }) {
  const history = usePaged<HistoryRow>(`/internal/assets/${assetId}/history`, {}, 25);
  const { reload } = history;
  // A write on the page (a tag, a rename) reloads the asset; the history follows it.
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ErrorAlert error={history.error} />
      {isEmpty(history) && <p class="empty">This asset has not been seen anywhere yet.</p>}
      <ol class="timeline" aria-label="Where the asset has been">
        {history.rows.map((row) => (
          <li key={`${row.event_observed_at}-${row.location_id}`} class={row.current ? 'current' : undefined}>
            <time dateTime={row.event_observed_at}>{formatDateTime(row.event_observed_at)}</time>
            <span class="timeline-place">
              {row.location_name ?? <span class="muted">unknown location</span>}
              {row.location_external_key ? (
                <span class="mono muted"> ({row.location_external_key})</span>
              ) : (
                row.location_id !== null && <span class="muted"> (retired)</span>
              )}
            </span>
            <span class="timeline-duration">{describeStay(row)}</span>
          </li>
        ))}
      </ol>
      <Pager paged={history} label="History" />
    </section>
  );
}
