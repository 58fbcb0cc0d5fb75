import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type LocationOption } from '../api.js';
import { useQuestionFocus } from '../components/confirm.js';
import { ErrorAlert } from '../components/errors.js';
import { LocationPicker, locationLabel } from '../components/location-picker.js';
import { focusLost, useAction } from '../components/use-action.js';
import { plural } from '../format.js';
import type { LocationDetails, LocationRecord } from './location-api.js';

/**
 * The structural changes to one location: a new key, a new parent, deletion. Each asks
 * before it acts, and shows the service's own answer when it refuses (the same message
 * the public API gives).
 */

interface ActionProps {
  details: LocationDetails;
  onChanged(location?: LocationRecord): void;
}

export function RenameKey({ details, onChanged }: ActionProps) {
  const location = details.data;
  const [key, setKey] = useState(location.external_key);
  const [confirming, setConfirming] = useState(false);
  // The question takes Rename…'s place, and goes away with the focus in it: the focus goes
  // to its Cancel, and back to Rename… (or, renamed, to the key field, Rename… then being
  // disabled) instead of the page body.
  const focus = useQuestionFocus(confirming);
  const [done, setDone] = useState<string | null>(null);
  const id = `rename-${location.id}`;
  // The key changed (here, or elsewhere and reloaded): the field shows it. The form used to
  // be remounted for that, which also threw away its own "Key changed to …" message the
  // moment it was set, and the focus with it.
  useEffect(() => setKey(location.external_key), [location.external_key]);
  const descendants = plural(details.descendant_count, 'sub-location');

  const {
    run: rename,
    busy,
    error,
  } = useAction(
    async () => {
      const res = await api<{ data: LocationRecord; descendant_count_affected: number }>(
        `/internal/locations/${location.id}/rename`,
        { method: 'POST', body: { external_key: key.trim() } },
      );
      setConfirming(false);
      document.getElementById(`${id}-key`)?.focus();
      setDone(
        `Key changed to ${res.data.external_key}; ${plural(res.descendant_count_affected, 'sub-location')} kept their own keys.`,
      );
      onChanged(res.data);
    },
    { onError: () => setConfirming(false) },
  );

  return (
    <form
      class="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        setDone(null);
        setConfirming(true);
      }}
    >
      <h3 id={`${id}-title`}>Rename key</h3>
      <div class="field">
        <label for={`${id}-key`}>New external key</label>
        <input
          id={`${id}-key`}
          class="mono"
          required
          value={key}
          aria-describedby={`${id}-hint`}
          onInput={(e) => {
            setKey(e.currentTarget.value);
            setConfirming(false);
          }}
        />
        <p class="hint" id={`${id}-hint`}>
          Letters, digits and hyphens. Only this location's key changes: its {descendants} (at any depth) keep
          theirs.
        </p>
      </div>
      {confirming ? (
        // biome-ignore lint/a11y/useSemanticElements: as in ConfirmedAction, the question names the group the focus lands in
        <div class="confirm" role="group" aria-labelledby={`${id}-question`}>
          <p id={`${id}-question`}>
            Change <span class="mono">{location.external_key}</span> to <span class="mono">{key.trim()}</span>
            ? This affects {descendants} below it, whose parent key changes.
          </p>
          <button type="button" class="button primary" disabled={busy} onClick={rename}>
            Confirm rename
          </button>
          <button
            type="button"
            ref={focus.cancel}
            class="button secondary"
            onClick={() => setConfirming(false)}
          >
            Cancel
          </button>
        </div>
      ) : (
        <button
          type="submit"
          ref={focus.ask}
          class="button secondary"
          disabled={key.trim() === location.external_key}
        >
          Rename…
        </button>
      )}
      <ErrorAlert error={error} />
      {done && (
        <p class="alert alert-success" role="status">
          {done}
        </p>
      )}
    </form>
  );
}

/** A location cannot go under itself or anything below it: the API would refuse the cycle. */
export function cycleReason(movingId: number, option: LocationOption): string | null {
  if (option.id === movingId) return 'this location itself';
  if (option.path_ids?.includes(movingId)) return 'inside this location';
  return null;
}

export function MoveLocation({ details, onChanged }: ActionProps) {
  const location = details.data;
  const [parent, setParent] = useState<LocationOption | null>(null);
  const id = `move-${location.id}`;
  // A move said nothing but the changed "Now under" line, and its button, disabled again
  // once the choice is cleared, dropped the focus to the page body: a status says where the
  // location went and takes the focus when it was lost.
  const [moved, setMoved] = useState<string | null>(null);
  const movedRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (moved && focusLost()) movedRef.current?.focus();
  }, [moved]);

  const {
    run: move,
    busy,
    error,
  } = useAction(async (parentId: number | null) => {
    const res = await api<{ data: LocationRecord }>(`/internal/locations/${location.id}`, {
      method: 'PATCH',
      body: { parent_id: parentId },
    });
    setMoved(
      parentId === null ? 'Moved to the top level.' : `Moved under ${parent ? locationLabel(parent) : ''}.`,
    );
    setParent(null);
    onChanged(res.data);
  });

  const where = details.path.length
    ? details.path.map((p) => p.name).join(' › ')
    : 'the top level (no parent)';
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Move</h3>
      <p>
        Now under: <strong>{where}</strong>
      </p>
      <LocationPicker
        id={id}
        label="New parent"
        value={parent}
        onChange={(p) => {
          setParent(p);
          setMoved(null);
        }}
        unavailable={(o) => cycleReason(location.id, o)}
      />
      <div class="card-actions">
        <button
          type="button"
          class="button primary"
          disabled={busy || !parent}
          onClick={() => parent && move(parent.id)}
        >
          {parent ? `Move under ${locationLabel(parent)}` : 'Move under the chosen location'}
        </button>
        {location.parent_id !== null && (
          <button type="button" class="button secondary" disabled={busy} onClick={() => move(null)}>
            Move to the top level
          </button>
        )}
      </div>
      <ErrorAlert error={error} />
      {moved && (
        <p class="alert alert-success" role="status" tabIndex={-1} ref={movedRef}>
          {moved}
        </p>
      )}
    </section>
  );
}

export function DeleteLocation({ details, onDeleted }: { details: LocationDetails; onDeleted(): void }) {
  const location = details.data;
  const [confirming, setConfirming] = useState(false);
  const focus = useQuestionFocus(confirming);

  const {
    run: remove,
    busy,
    error,
  } = useAction(
    async () => {
      await api(`/internal/locations/${location.id}`, { method: 'DELETE' });
      onDeleted();
    },
    { onError: () => setConfirming(false) },
  );

  return (
    <section class="card" aria-labelledby={`delete-${location.id}-title`}>
      <h3 id={`delete-${location.id}-title`}>Delete</h3>
      <p class="hint">
        A location with sub-locations, or with assets placed at it, cannot be deleted: move or delete them
        first. Its tags are released and its key can be used again.
      </p>
      {confirming ? (
        // biome-ignore lint/a11y/useSemanticElements: as in ConfirmedAction, the question names the group the focus lands in
        <div class="confirm" role="group" aria-labelledby={`delete-${location.id}-question`}>
          <span id={`delete-${location.id}-question`}>Delete {location.name}?</span>
          <button type="button" class="button danger" disabled={busy} onClick={remove}>
            Delete for good
          </button>
          <button
            type="button"
            ref={focus.cancel}
            class="button secondary"
            onClick={() => setConfirming(false)}
          >
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" ref={focus.ask} class="button secondary" onClick={() => setConfirming(true)}>
          Delete location…
        </button>
      )}
      {error !== null && (
        <div>
          <p class="hint">The location was not deleted:</p>
          <ErrorAlert error={error} />
        </div>
      )}
    </section>
  );
}
