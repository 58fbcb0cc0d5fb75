import { useEffect, useState } from 'preact/hooks';
import { api, type ReaderProblems as Problems } from '../api.js';
import { formatDateTime } from '../format.js';
import { ErrorAlert } from './errors.js';
import { tagTypeLabel } from './tag-capture.js';

/**
 * Which tag, what error: the tags the reader reported that match no asset and its latest
 * refused reads, each as a list of its own (the counters alone do not say what went
 * wrong); the messages as received stay one click away. Loaded with the card, which
 * shows this only when a counter is above zero.
 */
export function ReaderProblems({ readerId, readerName }: { readerId: number; readerName: string }) {
  const [problems, setProblems] = useState<Problems | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    setError(null);
    api<Problems>(`/internal/readers/${readerId}/problems`)
      .then(setProblems)
      .catch((e: unknown) => setError(e));
  }, [readerId]);

  const id = `reader-${readerId}-problems`;
  return (
    <section class="reader-problems" aria-labelledby={`${id}-title`}>
      <h4 id={`${id}-title`}>Latest unknown tags and bad reads</h4>
      <ErrorAlert error={error} />
      {problems && problems.data.length === 0 && <p class="muted">No recent message had a problem.</p>}
      {problems && problems.unknown_tags.length > 0 && (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable so the rows can be scrolled sideways by keyboard on a narrow screen (axe scrollable-region-focusable)
        <section class="table-wrap" tabIndex={0} aria-label={`Unknown tags of ${readerName}`}>
          <table>
            <caption class="visually-hidden">Unknown tags of {readerName}</caption>
            <thead>
              <tr>
                <th scope="col">Unknown tag</th>
                <th scope="col">Type</th>
                <th scope="col">Antenna</th>
                <th scope="col">Last seen</th>
                <th scope="col" class="num">
                  Reads
                </th>
              </tr>
            </thead>
            <tbody>
              {problems.unknown_tags.map((t) => (
                <tr key={`${t.tag_type}:${t.value}`}>
                  <td class="mono">{t.value}</td>
                  <td>{tagTypeLabel(t.tag_type)}</td>
                  <td>{t.antenna ?? 'not given'}</td>
                  <td>{formatDateTime(t.seen_at, '')}</td>
                  <td class="num">{t.reads}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {problems && problems.read_errors.length > 0 && (
        <ul class="read-errors" aria-label={`Bad reads of ${readerName}`}>
          {problems.read_errors.map((e, i) => (
            <li key={i}>
              <span class="muted">{formatDateTime(e.received_at, '')}</span> {e.message}
            </li>
          ))}
        </ul>
      )}
      {problems && problems.data.length > 0 && (
        <details>
          <summary>Messages as received</summary>
          <ol aria-label={`Latest problem messages of ${readerName}`}>
            {problems.data.map((p) => (
              <li key={p.received_at}>
                <p>
                  {formatDateTime(p.received_at, '')}: {p.bad_reads} bad, {p.unknown_reads} unknown
                </p>
                <pre class="mono payload">
                  {p.payload}
                  {p.payload_truncated ? '…' : ''}
                </pre>
              </li>
            ))}
          </ol>
        </details>
      )}
    </section>
  );
}
