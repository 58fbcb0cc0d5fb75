import { setParams } from '../url-state.js';

/**
 * A sortable column heading: a button named by its visible text alone (no aria-label, so
 * what is seen is what is announced and what voice control users say), the order on the
 * heading's `aria-sort`. The order goes to the URL's `?sort=` (a history step, back to
 * the first page); `-` marks descending.
 */
export function SortHeader({
  field,
  label,
  sort,
  defaultSort,
}: {
  field: string;
  label: string;
  sort: string;
  defaultSort: string;
}) {
  const ascending = sort === field;
  const descending = sort === `-${field}`;
  const next = ascending ? `-${field}` : field;
  return (
    <th scope="col" aria-sort={ascending ? 'ascending' : descending ? 'descending' : undefined}>
      <button
        type="button"
        class="sort-button"
        onClick={() => setParams({ sort: next === defaultSort ? null : next, page: null })}
      >
        {label}
        <span class="sort-mark" aria-hidden="true">
          {ascending ? '▲' : descending ? '▼' : '↕'}
        </span>
      </button>
    </th>
  );
}
