import { useRef, useState } from 'preact/hooks';

/**
 * What a person types into an edit form, kept while the record changes underneath it
 * (docs/web-app.md "Edit forms keep what you typed"). The form edits a draft of the
 * record's fields, started from one version of the record, its base, whose `updated_at`
 * the save sends. When a newer version arrives (the live stream, the page's own reload
 * after a tag or key change):
 *
 * - the fields this form edits are the same in it: the draft stays and the new version
 *   becomes the base (a tag attached on the same page is no reason to refuse the save);
 * - the draft is what was loaded, or already what the new version says: the form shows the
 *   new version, as if freshly opened;
 * - otherwise someone else changed a field while this person changed theirs: the draft
 *   stays, `conflict` lists the fields they changed, and the form refuses to save (the API
 *   would refuse the stale `updated_at`) until `loadTheirs` replaces the draft.
 */

export interface Draft<R, D> {
  /** What the inputs show. */
  value: D;
  /** Changes some fields of the draft. */
  update(change: Partial<D>): void;
  /** The version the draft started from: the save compares with it and sends its updated_at. */
  base: R;
  /** The fields another change altered while the draft differs; empty when there is no conflict. */
  conflict: (keyof D)[];
  /** Drops the draft for the record as it is now. */
  loadTheirs(): void;
}

export interface DraftState<R, D> {
  base: R;
  draft: D;
}

/** Fields compared as JSON: `comparable` strips what only the form needs (row ids). */
function changedFields<D extends object>(a: D, b: D, comparable: (d: D) => Record<string, unknown>) {
  const x = comparable(a);
  const y = comparable(b);
  return Object.keys(x).filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k])) as (keyof D)[];
}

/**
 * The draft as it stands against `current` (the rules above), and the fields in conflict.
 * `fields` must answer the same object for the same record (row ids stay).
 */
export function settleDraft<R extends { updated_at: string }, D extends object>(
  s: DraftState<R, D>,
  current: R,
  fields: (record: R) => D,
  comparable: (draft: D) => Record<string, unknown>,
): { state: DraftState<R, D>; conflict: (keyof D)[] } {
  if (current.updated_at === s.base.updated_at) return { state: s, conflict: [] };
  const theirs = fields(current);
  const theyChanged = changedFields(fields(s.base), theirs, comparable);
  if (theyChanged.length === 0) return { state: { base: current, draft: s.draft }, conflict: [] };
  const untouched = changedFields(fields(s.base), s.draft, comparable).length === 0;
  if (untouched || changedFields(theirs, s.draft, comparable).length === 0) {
    return { state: { base: current, draft: theirs }, conflict: [] };
  }
  return { state: s, conflict: theyChanged };
}

export function useDraft<R extends { updated_at: string }, D extends object>(
  record: R,
  fieldsOf: (record: R) => D,
  comparable: (draft: D) => Record<string, unknown> = (d) => d as Record<string, unknown>,
  /** A draft kept from an earlier mount (kept input), with the version it started from. */
  restored?: DraftState<R, D>,
): Draft<R, D> {
  // One draft per record object: the same rows (and row ids) every render, so an input
  // keeps its focus while the page re-renders around it.
  const cache = useRef(new WeakMap<R, D>());
  const fields = (r: R): D => {
    let d = cache.current.get(r);
    if (d === undefined) {
      d = fieldsOf(r);
      cache.current.set(r, d);
    }
    return d;
  };
  const [state, setState] = useState<DraftState<R, D>>(
    () => restored ?? { base: record, draft: fields(record) },
  );
  const latest = useRef(record);
  latest.current = record;

  const { state: now, conflict } = settleDraft(state, record, fields, comparable);
  return {
    value: now.draft,
    base: now.base,
    conflict,
    update: (change) =>
      setState((s) => {
        const settled = settleDraft(s, latest.current, fields, comparable).state;
        return { base: settled.base, draft: { ...settled.draft, ...change } };
      }),
    loadTheirs: () => setState({ base: latest.current, draft: fields(latest.current) }),
  };
}
