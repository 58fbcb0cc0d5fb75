import type { ComponentChildren } from 'preact';
import { ErrorAlert } from './errors.js';
import { isEmpty, type Paged, Pager } from './paging.js';

/**
 * A titled section around one paged list: the list's load error above it and its pager
 * below, so every list page reports a failed load and pages the same way. `id` names the
 * heading (`<id>-title`), which labels the section and can take the focus: an item that
 * removes itself (a webhook deleted, an invitation revoked) hands it there, leading into
 * the items left, instead of dropping it to the page body with its own buttons.
 */
export function ListSection({
  id,
  title,
  list,
  pagerLabel,
  children,
}: {
  id: string;
  title: string;
  list: Paged<unknown>;
  pagerLabel: string;
  children: ComponentChildren;
}) {
  const titleId = `${id}-title`;
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId} tabIndex={-1}>
        {title}
      </h2>
      <ErrorAlert error={list.error} />
      {children}
      <Pager paged={list} label={pagerLabel} />
    </section>
  );
}

/**
 * A table's header row of plain column names; `actions` adds the last column, of each
 * row's buttons, named for screen readers only (its buttons say what they do).
 */
/** Gives the focus to a ListSection's heading (see there). */
export const focusListTitle = (id: string): void => document.getElementById(`${id}-title`)?.focus();

export function TableHead({ columns, actions = false }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** The row a table shows in place of rows once its list has loaded and is empty. */
export function EmptyRow({
  list,
  columns,
  children,
}: {
  list: Paged<unknown>;
  columns: number;
  children: ComponentChildren;
}) {
  if (!isEmpty(list)) return null;
  return (
    <tr>
      <td colSpan={columns} class="empty">
        {children}
      </td>
    </tr>
  );
}
