/** The notice above a form's buttons while `conflict` is not empty; `id` names it for the save button. */
export function DraftConflict({
  id,
  what,
  changed,
  onLoad,
}: {
  id: string;
  /** "asset", "location". */
  what: string;
  /** Labels of the fields they changed. */
  changed: string[];
  onLoad(): void;
}) {
  if (changed.length === 0) return null;
  return (
    <div class="alert alert-warning" role="alert" id={id}>
      <p>
        This {what} was changed by someone else while you edited it ({changed.join(', ')}). Your changes are
        kept here, but saving is refused until you load the new version, which replaces them.
      </p>
      <button type="button" class="button secondary" onClick={onLoad}>
        Load the new version
      </button>
    </div>
  );
}
