import { useEffect, useState } from 'preact/hooks';
import { useDebounced } from './components/location-picker.js';
import { navigate, useLocation } from './router.js';

/**
 * A list's state (page, sort, filters, search, selection) lives in the query string, so
 * reload, Back and a shared link return to the same rows. Deliberate steps (a page, a
 * sort, a selection) push a history entry; typing in a search box replaces the current one.
 */

export type ParamPatch = Record<string, string | number | null | undefined>;

/** The current URL with `patch` applied (null, undefined or '' removes a parameter). */
export function hrefWith(patch: ParamPatch): string {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || value === undefined || value === '') params.delete(key);
    else params.set(key, String(value));
  }
  const text = params.toString();
  return `${window.location.pathname}${text ? `?${text}` : ''}`;
}

export function setParams(patch: ParamPatch, options: { replace?: boolean } = {}): void {
  navigate(hrefWith(patch), options);
}

/** The query string, re-read on every navigation. */
export function useParams(): URLSearchParams {
  return useLocation().search;
}

/** A 1-based `page` parameter as a row offset. */
export function offsetOf(params: URLSearchParams, limit: number, name = 'page'): number {
  const page = Number.parseInt(params.get(name) ?? '', 10);
  return Number.isFinite(page) && page > 1 ? (page - 1) * limit : 0;
}

/**
 * A search box bound to `?q=`: what is typed shows at once, the URL (and so the query)
 * follows after a pause and goes back to the first page. Back or a link that changes `q`
 * updates the box.
 */
export function useSearchParam(name = 'q'): { value: string; query: string; setValue(q: string): void } {
  const params = useParams();
  const fromUrl = params.get(name) ?? '';
  const [value, setValue] = useState(fromUrl);
  const [typed, setTyped] = useState(false);
  const debounced = useDebounced(value.trim());

  // Back/Forward (or a link) changed the URL: show what it says.
  useEffect(() => {
    if (!typed && fromUrl !== value.trim()) setValue(fromUrl);
  }, [fromUrl]);

  useEffect(() => {
    if (!typed) return;
    setTyped(false);
    if ((new URLSearchParams(window.location.search).get(name) ?? '') === debounced) return;
    setParams({ [name]: debounced, page: null }, { replace: true });
  }, [debounced]);

  return {
    value,
    query: fromUrl,
    setValue(q: string) {
      setTyped(true);
      setValue(q);
    },
  };
}
