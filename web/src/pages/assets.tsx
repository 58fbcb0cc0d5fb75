import type { AssetRow, ReportRow } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { EmptyRow, TableHead } from '../components/list-layout.js';
import { locationLabel } from '../components/location-picker.js';
import { PageHeader } from '../components/page.js';
import { Pager, usePaged } from '../components/paging.js';
import { SortHeader } from '../components/sort-header.js';
import { TableWrap } from '../components/table-wrap.js';
import { formatDateTime } from '../format.js';
import { touchesAssets, useLiveRefresh } from '../live.js';
import { Link, useLocation } from '../router.js';
import { useCan } from '../session.js';
import { useParams, useSearchParam as useUrlSearch } from '../url-state.js';

/** A search box whose value lives in the page's `?q=` (so Back, reload and links keep it). */
function useSearchParam(): [string, string, (q: string) => void] {
  const search = useUrlSearch();
  return [search.value, search.query, search.setValue];
}

const ASSET_SORTS = [
  'name',
  '-name',
  'external_key',
  '-external_key',
  'location',
  '-location',
  'last_seen_at',
  '-last_seen_at',
];

function SearchBox({
  id,
  label,
  value,
  onInput,
  hint,
}: {
  id: string;
  label: string;
  value: string;
  onInput(q: string): void;
  hint: string;
}) {
  return (
    <form class="search" onSubmit={(e) => e.preventDefault()}>
      <label for={id}>{label}</label>
      <input
        id={id}
        type="search"
        value={value}
        autocomplete="off"
        aria-describedby={`${id}-hint`}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    </form>
  );
}

export function AssetsPage() {
  const can = useCan();
  const [q, query, setQ] = useSearchParam();
  const params = useParams();
  const wanted = params.get('sort') ?? 'name';
  const sort = ASSET_SORTS.includes(wanted) ? wanted : 'name';
  const assets = usePaged<AssetRow>('/internal/assets', { q: query, sort }, 25, { urlPage: true });
  // Reads and edits elsewhere show up here without a reload, on the same page.
  useLiveRefresh(assets.reload, touchesAssets);
  // The asset page sends people here after a delete, naming what was deleted.
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  return (
    <main id="main">
      <PageHeader title="Assets">
        {can('editor') && (
          <Link href="/assets/new" class="button primary">
            New asset
          </Link>
        )}
      </PageHeader>
      {deleted && (
        <p class="alert alert-success" role="status">
          Deleted “{deleted}”.
        </p>
      )}
      <SearchBox
        id="asset-search"
        label="Search assets"
        value={q}
        onInput={setQ}
        hint="Matches name, key, description and tag values."
      />
      <ErrorAlert error={assets.error} />
      <TableWrap label="Assets and where they are now" busy={assets.loading}>
        <table>
          <caption class="visually-hidden">Assets and where they are now</caption>
          <thead>
            <tr>
              <SortHeader field="external_key" label="Key" sort={sort} defaultSort="name" />
              <SortHeader field="name" label="Name" sort={sort} defaultSort="name" />
              <SortHeader field="location" label="Current location" sort={sort} defaultSort="name" />
              <SortHeader field="last_seen_at" label="Last seen" sort={sort} defaultSort="name" />
            </tr>
          </thead>
          <tbody>
            {assets.rows.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <Link href={`/assets/${a.id}`} class="mono">
                    {a.external_key}
                  </Link>
                </th>
                <td class="name-cell">
                  <Link href={`/assets/${a.id}`}>{a.name}</Link>
                </td>
                <td class="name-cell">
                  {a.location_id === null ? (
                    <span class="muted">not seen yet</span>
                  ) : (
                    locationLabel({ name: a.location_name, external_key: a.location_external_key })
                  )}
                </td>
                <td>{formatDateTime(a.last_seen_at, 'never')}</td>
              </tr>
            ))}
            <EmptyRow list={assets} columns={4}>
              {query ? `No asset matches “${query}”.` : 'No assets yet.'}
            </EmptyRow>
          </tbody>
        </table>
      </TableWrap>
      <Pager paged={assets} label="Assets" />
    </main>
  );
}

export function ReportPage() {
  const [q, query, setQ] = useSearchParam();
  const report = usePaged<ReportRow>('/internal/report', { q: query }, 50, { urlPage: true });
  useLiveRefresh(report.reload, touchesAssets);
  return (
    <main id="main">
      <PageHeader title="Asset-location report" />
      <p class="lead">Every asset that has been scanned, with where it was seen last.</p>
      <SearchBox
        id="report-search"
        label="Filter"
        value={q}
        onInput={setQ}
        hint="Matches the asset's key, name and tag values."
      />
      <ErrorAlert error={report.error} />
      <TableWrap label="Last known location of each scanned asset" busy={report.loading}>
        <table>
          <caption class="visually-hidden">Last known location of each scanned asset</caption>
          <TableHead columns={['Asset', 'Location', 'Last seen', 'State']} />
          <tbody>
            {report.rows.map((r) => (
              <tr key={r.asset_id}>
                <th scope="row">
                  <Link href={`/assets/${r.asset_id}`}>
                    {r.asset_name ?? r.asset_external_key} <span class="mono">({r.asset_external_key})</span>
                  </Link>
                </th>
                <td class="name-cell">
                  {r.location_id === null ? (
                    <span class="muted">—</span>
                  ) : (
                    locationLabel({ name: r.location_name, external_key: r.location_external_key })
                  )}
                </td>
                <td>{formatDateTime(r.asset_last_seen)}</td>
                <td>{r.asset_deleted_at ? <span class="badge badge-revoked">deleted</span> : 'live'}</td>
              </tr>
            ))}
            <EmptyRow list={report} columns={4}>
              Nothing scanned yet.
            </EmptyRow>
          </tbody>
        </table>
      </TableWrap>
      <Pager paged={report} label="Report" />
    </main>
  );
}
