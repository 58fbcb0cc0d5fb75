import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type Page, type Query } from '../api.js';
import { offsetOf, setParams, useParams } from '../url-state.js';

export interface Paged<T> {
  rows: T[];
  total: number;
  /** The offset asked for (the URL's page): Previous and Next step from it. */
  offset: number;
  /** The offset `rows` were loaded at: until the next page answers, still the previous one. */
  rowsOffset: number;
  limit: number;
  loading: boolean;
  error: unknown;
  setOffset(offset: number): void;
  reload(): void;
}

/**
 * One page of a `/internal/` list: `limit` rows from `offset`, refetched when the query
 * changes (back to the first page) or on `reload()`. Never more than one page in memory.
 */
export function usePaged<T>(
  path: string | null,
  query: Query = {},
  limit = 25,
  options: { urlPage?: boolean } = {},
): Paged<T> {
  const [localOffset, setLocalOffset] = useState(0);
  // With `urlPage` the page is the URL's `?page=` (1-based): Back and reload keep it, and
  // whoever changes the query drops it, so no reset happens here.
  const params = useParams();
  const urlPage = options.urlPage === true;
  const offset = urlPage ? offsetOf(params, limit) : localOffset;
  const setOffset = useCallback(
    (next: number, replace = false) => {
      if (!urlPage) setLocalOffset(next);
      else setParams({ page: next > 0 ? Math.floor(next / limit) + 1 : null }, { replace });
    },
    [urlPage, limit],
  );
  const [page, setPage] = useState<{ result: Page<T>; offset: number } | null>(null);
  const [loading, setLoading] = useState(path !== null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const queryKey = JSON.stringify(query);
  const lastKey = useRef(`${path}|${queryKey}`);

  useEffect(() => {
    const key = `${path}|${queryKey}`;
    if (key !== lastKey.current) {
      lastKey.current = key;
      if (offset !== 0 && !urlPage) {
        setOffset(0);
        return;
      }
    }
    if (path === null) return;
    let live = true;
    setLoading(true);
    api<Page<T>>(path, { query: { ...(JSON.parse(queryKey) as Query), limit, offset } })
      .then((result) => {
        if (!live) return;
        // A page past the end (rows removed since): step back to the last page.
        if (result.data.length === 0 && offset > 0 && result.total_count > 0) {
          setOffset(Math.max(0, Math.floor((result.total_count - 1) / limit) * limit), true);
          return;
        }
        setPage({ result, offset });
        setError(null);
      })
      .catch((e: unknown) => {
        if (live) setError(e);
      })
      .finally(() => {
        if (live) setLoading(false);
      });
    return () => {
      live = false;
    };
  }, [path, queryKey, offset, limit, version, urlPage, setOffset]);

  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return {
    rows: page?.result.data ?? [],
    total: page?.result.total_count ?? 0,
    offset,
    rowsOffset: page?.offset ?? 0,
    limit,
    loading,
    error,
    setOffset,
    reload,
  };
}

/**
 * Whether a list is known to be empty: loaded, without an error, and no rows. While a page
 * loads or after a failure the list may well have rows, so its "none yet" line waits.
 */
export function isEmpty(list: Pick<Paged<unknown>, 'rows' | 'loading' | 'error'>): boolean {
  return !list.loading && !list.error && list.rows.length === 0;
}

/** Previous / Next and "x–y of total", for any paged list. */
export function Pager({ paged, label }: { paged: Paged<unknown>; label: string }) {
  const { offset, rowsOffset, limit, total, rows, loading } = paged;
  // The rows shown, numbered where they were loaded: right after Next the previous page's
  // rows are still there, and "26–50 of 30" (the new offset with the old rows) is wrong.
  const first = total === 0 ? 0 : rowsOffset + 1;
  const last = rowsOffset + rows.length;
  // Held only while a step to another page loads (so a second click does not step from the
  // page still shown). A refresh of the page shown (the live stream's, a reload()) leaves
  // them alone: one starting under the pointer swallowed the click (a disabled button takes
  // no click), and after a failed step they must work to step again.
  const stepping = loading && offset !== rowsOffset;
  if (total === 0 && offset === 0) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button
        type="button"
        class="button secondary"
        disabled={stepping || offset === 0}
        onClick={() => paged.setOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span class="pager-status" aria-live="polite">
        {first}–{last} of {total}
      </span>
      <button
        type="button"
        class="button secondary"
        disabled={stepping || offset + limit >= total}
        onClick={() => paged.setOffset(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
