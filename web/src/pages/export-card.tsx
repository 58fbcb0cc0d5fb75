import { useState } from 'preact/hooks';
import { ApiError, withQuery } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { submitting, useAction } from '../components/use-action.js';
import type { Kind, RowError } from './import.js';

/** Saves a body the page made (an export, the refused rows) as a file download. */
export function download(name: string, body: Blob) {
  const url = URL.createObjectURL(body);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** CSV export of what the list filters select. */
export function ExportCard({ kind }: { kind: Kind }) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState('');
  const [includeDeleted, setIncludeDeleted] = useState(false);

  const { run, busy, error } = useAction(async () => {
    const url = withQuery(`/internal/export/${kind}`, {
      q: q || undefined,
      is_active: active || undefined,
      include_deleted: includeDeleted ? 'true' : undefined,
    });
    const res = await fetch(url, { headers: { accept: 'text/csv' } });
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as {
        error?: { type?: string; detail?: string; fields?: RowError[] };
      };
      throw new ApiError(
        res.status,
        body.error?.type ?? 'error',
        body.error?.detail ?? res.statusText,
        body.error?.fields ?? [],
      );
    }
    const name =
      /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `${kind}.csv`;
    download(name, await res.blob());
  });

  return (
    <form class="card" aria-labelledby="export-title" onSubmit={submitting(run)}>
      <h2 id="export-title">Export {kind}</h2>
      <p class="hint">
        Every {kind === 'assets' ? 'asset' : 'location'} the list shows with these filters, as CSV that
        imports back unchanged.
      </p>
      <div class="row compact">
        <div class="field">
          <label for="export-q">Search</label>
          <input id="export-q" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="export-active">Active</label>
          <select id="export-active" value={active} onChange={(e) => setActive(e.currentTarget.value)}>
            <option value="">Active and inactive</option>
            <option value="true">Active only</option>
            <option value="false">Inactive only</option>
          </select>
        </div>
      </div>
      <label class="checkbox">
        <input
          type="checkbox"
          checked={includeDeleted}
          onChange={(e) => setIncludeDeleted(e.currentTarget.checked)}
        />
        Include deleted
      </label>
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        {busy ? 'Exporting…' : 'Download CSV'}
      </button>
    </form>
  );
}
