import { useRef, useState } from 'preact/hooks';
import { api, type LocationOption, type Reader, type ScanPoint } from '../api.js';
import { useCan } from '../session.js';
import { ConfirmedAction } from './confirm.js';
import { ErrorAlert } from './errors.js';
import { LocationPicker, locationLabel } from './location-picker.js';
import { submitting, useAction } from './use-action.js';

/** A reader's scan points on its card: one row each (edit, remove), and the form that maps another antenna. */

/** The antenna a scan point covers, as typed: empty stands for every antenna of the reader. */
function AntennaField({ id, value, onValue }: { id: string; value: string; onValue(value: string): void }) {
  return (
    <div class="field antenna">
      <label for={`${id}-antenna`}>Antenna</label>
      <input
        id={`${id}-antenna`}
        type="number"
        inputMode="numeric"
        min={0}
        max={65535}
        placeholder="any"
        aria-describedby={`${id}-antenna-hint`}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
      <p class="hint" id={`${id}-antenna-hint`}>
        Empty: every antenna of the reader.
      </p>
    </div>
  );
}

export function ScanPointRow({
  reader,
  point,
  onChanged,
}: {
  reader: Reader;
  point: ScanPoint;
  onChanged(): void;
}) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const editToggle = useRef<HTMLButtonElement>(null);
  const admin = useCan()('admin');
  const {
    run: remove,
    busy,
    error,
  } = useAction(
    async () => {
      await api(`/internal/readers/${reader.id}/scan-points/${point.id}`, { method: 'DELETE' });
      // The row goes, with the focus on its "Yes, remove", which fell to the page body: the
      // reader's Scan points heading takes it, leading into the points left.
      document.getElementById(`reader-${reader.id}-scan-points`)?.focus();
      onChanged();
    },
    { onError: () => setConfirming(false) },
  );
  const antenna = point.antenna === null ? 'Any antenna' : `Antenna ${point.antenna}`;
  return (
    <li>
      <span>
        {antenna} → {locationLabel({ name: point.location_name, external_key: point.location_external_key })}
      </span>
      {admin && (
        <>
          <button
            type="button"
            ref={editToggle}
            class="button link"
            aria-label={`Edit ${antenna} of ${reader.name}`}
            aria-expanded={editing}
            onClick={() => setEditing(!editing)}
          >
            Edit
          </button>
          <ConfirmedAction
            label="Remove"
            ariaLabel={`Remove ${antenna} of ${reader.name}`}
            asking={confirming}
            onAsking={setConfirming}
            question={`Remove ${antenna} of ${reader.name}?`}
            yes="Yes, remove"
            busy={busy}
            onYes={remove}
          />
        </>
      )}
      <ErrorAlert error={error} />
      {editing && (
        <EditScanPoint
          reader={reader}
          point={point}
          onSaved={() => {
            setEditing(false);
            // The form goes away with the focus in it: back to the Edit that opened it.
            editToggle.current?.focus();
            onChanged();
          }}
          onCancel={() => {
            setEditing(false);
            editToggle.current?.focus();
          }}
        />
      )}
    </li>
  );
}

export function AddScanPoint({ reader, onAdded }: { reader: Reader; onAdded(): void }) {
  const [antenna, setAntenna] = useState('');
  const [location, setLocation] = useState<LocationOption | null>(null);
  const id = `reader-${reader.id}-sp`;

  const { run, busy, error } = useAction(async () => {
    if (!location) throw new Error('Choose the location this antenna covers.');
    await api(`/internal/readers/${reader.id}/scan-points`, {
      method: 'POST',
      body: { antenna: antenna === '' ? null : Number(antenna), location_id: location.id },
    });
    setAntenna('');
    setLocation(null);
    onAdded();
  });

  return (
    <form class="scan-point-form" onSubmit={submitting(run)} aria-label={`Map an antenna of ${reader.name}`}>
      <AntennaField id={id} value={antenna} onValue={setAntenna} />
      <LocationPicker id={id} label="Location covered" value={location} onChange={setLocation} />
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Map antenna
      </button>
    </form>
  );
}

/** Point a scan point at another antenna or location (PATCH .../scan-points/{id}). */
export function EditScanPoint({
  reader,
  point,
  onSaved,
  onCancel,
}: {
  reader: Reader;
  point: ScanPoint;
  onSaved(): void;
  onCancel(): void;
}) {
  const [antenna, setAntenna] = useState(point.antenna === null ? '' : String(point.antenna));
  const [location, setLocation] = useState<LocationOption | null>(null);
  const id = `reader-${reader.id}-sp-${point.id}`;

  const { run, busy, error } = useAction(async () => {
    const body: Record<string, unknown> = {};
    const wanted = antenna === '' ? null : Number(antenna);
    if (wanted !== point.antenna) body.antenna = wanted;
    // No location picked: the point keeps its location.
    if (location && location.id !== point.location_id) body.location_id = location.id;
    await api(`/internal/readers/${reader.id}/scan-points/${point.id}`, { method: 'PATCH', body });
    onSaved();
  });

  return (
    <form
      class="scan-point-form"
      onSubmit={submitting(run)}
      aria-label={`Edit a scan point of ${reader.name}`}
    >
      <AntennaField id={id} value={antenna} onValue={setAntenna} />
      <LocationPicker
        id={id}
        label="Move to location (empty: keep)"
        value={location}
        onChange={setLocation}
      />
      <ErrorAlert error={error} />
      <div class="card-actions">
        <button type="submit" class="button primary" disabled={busy}>
          Save scan point
        </button>
        <button type="button" class="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
