import type { RefObject } from 'preact';
import type { Draft } from './use-draft.js';

/**
 * The notice above an edit form's buttons while its draft is in conflict (useDraft): who
 * changed what, and a button that loads the new version in place of the draft, then puts
 * the focus on `first` (the button goes away with the notice). `id` names it for the save
 * button (saveAttributes).
 */
export function DraftConflict<D extends object>({
  id,
  what,
  draft,
  labels,
  first,
  onLoaded,
}: {
  id: string;
  /** "asset", "location". */
  what: string;
  draft: Draft<unknown, D>;
  /** How each field is named in the notice. */
  labels: Record<keyof D, string>;
  first: RefObject<HTMLElement | null>;
  /** Anything else of the form's to reset with the draft. */
  onLoaded?(): void;
}) {
  if (draft.conflict.length === 0) return null;
  const changed = draft.conflict.map((f) => labels[f]).join(', ');
  return (
    <div class="alert alert-warning" role="alert" id={id}>
      <p>
        This {what} was changed by someone else while you edited it ({changed}). Your changes are kept here,
        but saving is refused until you load the new version, which replaces them.
      </p>
      <button
        type="button"
        class="button secondary"
        onClick={() => {
          draft.loadTheirs();
          onLoaded?.();
          first.current?.focus();
        }}
      >
        Load the new version
      </button>
    </div>
  );
}

/** The save button's state: disabled while saving or in conflict, and then described by the notice. */
export function saveAttributes(draft: { conflict: unknown[] }, busy: boolean, noticeId: string) {
  const conflict = draft.conflict.length > 0;
  return { disabled: busy || conflict, 'aria-describedby': conflict ? noticeId : undefined };
}
