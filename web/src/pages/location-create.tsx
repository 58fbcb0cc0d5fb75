import { useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { useKeptInput } from '../components/kept-input.js';
import { submitting, useAction } from '../components/use-action.js';
import type { LocationRecord } from './location-api.js';

/** The fields the new-location form has an input for. */
const CREATE_FIELDS = new Set(['name', 'external_key', 'description']);

interface Place {
  id: number;
  name: string;
}

/** The location this form created last, and where it put it (null: the top level). */
interface Created {
  id: number;
  parent: Place | null;
}

/**
 * The new-location form. A created location becomes the selection (its panel opens, to tag
 * it), but the next one goes where the last one went, beside it: offering "Under <the one
 * just created>" by default nested every location typed in a row one level deeper than the
 * last (Dock 1, then Dock 2 under Dock 1; a second site under the first). The new one is
 * still offered, one click away.
 */
export function CreateLocation({
  selected,
  onCreated,
}: {
  selected: Place | null;
  onCreated(l: LocationRecord): void;
}) {
  const [name, setName, clearName] = useKeptInput('location.name', '');
  const [key, setKey, clearKey] = useKeptInput('location.key', '');
  const [description, setDescription, clearDescription] = useKeptInput('location.description', '');
  const [last, setLast] = useState<Created | null>(null);
  // The person's own choice: a parent's id or 'top'; null until they pick one.
  const [chosen, setChosen] = useState<number | 'top' | null>(null);
  const nameField = useRef<HTMLInputElement>(null);

  // Only while the selection is still the location just created: another selection is a
  // new place to add under.
  const besideLast = last && selected && last.id === selected.id ? last : null;
  const options: { value: number | 'top'; label: string }[] = [{ value: 'top', label: 'At the top level' }];
  if (besideLast?.parent)
    options.push({ value: besideLast.parent.id, label: `Under ${besideLast.parent.name}` });
  if (selected) options.push({ value: selected.id, label: `Under ${selected.name}` });
  const fallback = besideLast ? (besideLast.parent?.id ?? 'top') : (selected?.id ?? 'top');
  const place = options.some((o) => o.value === chosen) ? (chosen as number | 'top') : fallback;

  const { run, busy, error } = useAction(async () => {
    const body: Record<string, unknown> = { name };
    if (key.trim()) body.external_key = key.trim();
    if (description.trim()) body.description = description;
    const parent = place === 'top' ? null : place === selected?.id ? selected : (besideLast?.parent ?? null);
    if (parent) body.parent_id = parent.id;
    const res = await api<{ data: LocationRecord }>('/internal/locations', { method: 'POST', body });
    clearName();
    clearKey();
    clearDescription();
    setLast({ id: res.data.id, parent: parent && { id: parent.id, name: parent.name } });
    setChosen(null);
    onCreated(res.data);
    // Ready for the next one. A click on the button, disabled while it ran, left the focus
    // on nothing (Enter in a field keeps it there).
    if (!document.activeElement || document.activeElement === document.body) nameField.current?.focus();
  });
  // Each field's message under its field, as on the asset form (a bad key said so only
  // in an alert above the button, and the input was not marked).
  const errors = useFormErrors(error, (field) => CREATE_FIELDS.has(field));

  return (
    <form
      class="card"
      onSubmit={submitting(run)}
      aria-labelledby="create-location-title"
      {...errors.listeners}
    >
      <h2 id="create-location-title">New location</h2>
      <div class="row">
        <div class="field">
          <label for="new-location-name">Name</label>
          <input
            id="new-location-name"
            ref={nameField}
            required
            value={name}
            {...errors.input('name', 'new-location-name')}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <FieldMessage errors={errors} field="name" id="new-location-name" />
        </div>
        <div class="field">
          <label for="new-location-key">External key</label>
          <input
            id="new-location-key"
            class="mono"
            value={key}
            {...errors.input('external_key', 'new-location-key', 'new-location-key-hint')}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <p class="hint" id="new-location-key-hint">
            Optional: left empty, the next free LOC-NNNN is used.
          </p>
          <FieldMessage errors={errors} field="external_key" id="new-location-key" />
        </div>
      </div>
      <div class="field">
        <label for="new-location-description">Description</label>
        <input
          id="new-location-description"
          value={description}
          {...errors.input('description', 'new-location-description')}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <FieldMessage errors={errors} field="description" id="new-location-description" />
      </div>
      <fieldset class="radio-group inline">
        <legend>Place it</legend>
        {options.map((option) => (
          <label class="radio" key={option.value}>
            <input
              type="radio"
              name="new-location-parent"
              checked={place === option.value}
              onChange={() => setChosen(option.value)}
            />
            {option.label}
          </label>
        ))}
      </fieldset>
      <FormAlert errors={errors} />
      <button type="submit" class="button primary" disabled={busy}>
        Create location
      </button>
    </form>
  );
}
