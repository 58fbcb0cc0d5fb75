import { useState } from 'preact/hooks';
import { api, type ReaderProblems as Problems } from '../api.js';
import { formatDateTime } from '../format.js';
import { ErrorAlert } from './errors.js';

/**
 * Which tag, what error: the reader's latest messages with bad reads or unknown tags,
 * loaded when opened (the counters alone do not say what went wrong).
 */
export function ReaderProblems({ readerId, readerName }: { readerId: number; readerName: string }) {
  const [problems, setProblems] = useState<Problems | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = (event: Event) => {
    if (!(event.currentTarget as HTMLDetailsElement).open) return;
    setError(null);
    api<Problems>(`/internal/readers/${readerId}/problems`)
      .then(setProblems)
      .catch((e: unknown) => setError(e));
  };

  return (
    <details class="reader-problems" onToggle={load}>
      <summary>Latest bad reads and unknown tags of {readerName}</summary>
      <ErrorAlert error={error} />
      {problems && problems.data.length === 0 && <p class="muted">No recent message had a problem.</p>}
      {problems && problems.data.length > 0 && (
        <ol aria-label={`Latest problems of ${readerName}`}>
          {problems.data.map((p) => (
            <li key={p.received_at}>
              <p>
                {formatDateTime(p.received_at, '')}: {p.bad_reads} bad, {p.unknown_reads} unknown
              </p>
              {p.errors.length > 0 && (
                <ul>
                  {p.errors.map((e, i) => (
                    <li key={i}>{e}</li>
                  ))}
                </ul>
              )}
              <pre class="mono payload">
                {p.payload}
                {p.payload_truncated ? '…' : ''}
              </pre>
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}
