import { useEffect, useState } from 'preact/hooks';
import { api, type LocationOption, type Page } from '../api.js';
import { plural } from '../format.js';
import { useLiveRefresh } from '../live.js';
import { ErrorAlert } from './errors.js';

const PICKER_LIMIT = 20;

export function useDebounced<T>(value: T, ms = 250): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

export const locationLabel = (l: { name: string | null; external_key: string | null }) =>
  l.name && l.external_key ? `${l.name} (${l.external_key})` : (l.name ?? l.external_key ?? '—');

/** A picker option: its ancestors then the location, so same-named rooms can be told apart. */
export const locationPathLabel = (l: LocationOption) =>
  l.path && l.path.length > 0 ? `${l.path.join(' › ')} › ${locationLabel(l)}` : locationLabel(l);

/**
 * Choose a location: type to search (name, key or tag), then pick from at most
 * twenty matches in a native select, so it works with a keyboard and a screen reader.
 */
export function LocationPicker({
  id,
  label,
  value,
  onChange,
  unavailable,
}: {
  id: string;
  label: string;
  value: LocationOption | null;
  onChange(location: LocationOption | null): void;
  /** Why an option cannot be chosen (it is shown disabled with the reason), or null. */
  unavailable?(location: LocationOption): string | null;
}) {
  const [q, setQ] = useState('');
  const query = useDebounced(q.trim());
  const [options, setOptions] = useState<LocationOption[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);
  // Options carry each location's key and path: a rename or move (here or in another
  // tab) must reach them without the user retyping the search. useLiveRefresh makes a
  // burst of changes one reload; a page's own edit comes back on the stream too.
  const [generation, setGeneration] = useState(0);
  useLiveRefresh(
    () => setGeneration((g) => g + 1),
    (c) => c.types.some((t) => t.startsWith('location.')),
  );

  useEffect(() => {
    let live = true;
    api<Page<LocationOption>>('/internal/locations', { query: { q: query, limit: PICKER_LIMIT } })
      .then((page) => {
        if (!live) return;
        setOptions(page.data);
        setTotal(page.total_count);
        setError(null);
      })
      .catch((e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [query, generation]);

  const shown = value && !options.some((o) => o.id === value.id) ? [value, ...options] : options;
  return (
    <fieldset class="picker">
      <legend>{label}</legend>
      <div class="field">
        <label for={`${id}-search`}>Search locations</label>
        <input
          id={`${id}-search`}
          type="search"
          value={q}
          autocomplete="off"
          placeholder="Name, key or tag"
          onInput={(e) => setQ(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`${id}-select`}>
          Location{' '}
          <span class="hint">
            {total > PICKER_LIMIT
              ? `(first ${PICKER_LIMIT} of ${total} matches)`
              : `(${plural(total, 'match', 'matches')})`}
          </span>
        </label>
        <select
          id={`${id}-select`}
          value={value ? String(value.id) : ''}
          onChange={(e) => {
            const picked = shown.find((o) => String(o.id) === e.currentTarget.value);
            onChange(picked ?? null);
          }}
        >
          <option value="">Choose a location…</option>
          {shown.map((o) => {
            const why = unavailable?.(o) ?? null;
            return (
              <option key={o.id} value={String(o.id)} disabled={why !== null}>
                {why === null ? locationPathLabel(o) : `${locationPathLabel(o)} (${why})`}
              </option>
            );
          })}
        </select>
      </div>
      <ErrorAlert error={error} />
    </fieldset>
  );
}
