import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type Asset, api } from '../api.js';
import { DraftConflict, saveAttributes } from '../components/draft-conflict.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { ActiveCheckbox, DescriptionField } from '../components/record-fields.js';
import { TagFields } from '../components/tag-capture.js';
import { submitting, useAction } from '../components/use-action.js';
import { useDraft } from '../components/use-draft.js';
import {
  type AssetFields,
  BLANK,
  comparable,
  type Editable,
  FIELD_LABELS,
  fieldsOf,
  fromLocalInput,
  type MetaRow,
  metadataOf,
  rowId,
  type TagRow,
} from './asset-fields.js';
import { firstTags, forgetKeptAsset, keepAsset, restoreKeptAsset } from './asset-kept.js';

/**
 * Creating and editing an asset. The rules are the API's (the same service runs behind
 * /internal/), so the form checks nothing the API checks: it only turns what a person
 * types into the body (metadata rows into an object, local times into RFC 3339) and shows
 * the API's answer next to each field.
 */

/** Fields the form shows inline; the rest of an error goes to the alert. */
const INLINE =
  /^(name|external_key|description|is_active|metadata|valid_from|valid_to|tags\[\d+\]\.(tag_type|value))$/;

export function AssetForm({
  asset,
  onSaved,
  onCancel,
}: {
  /** The asset to edit; a new one is created when absent. */
  asset?: Asset;
  onSaved(asset: Asset): void;
  onCancel?(): void;
}) {
  const editing = asset !== undefined;
  // What was typed here before a sign-in or a reload (asset-kept.ts), read once.
  const [kept] = useState(() => restoreKeptAsset(asset?.id));
  // An edit keeps what was typed when the asset changes meanwhile (the live stream, a tag
  // attached on the page); a change to these fields made elsewhere is a conflict to resolve.
  const draft = useDraft<Editable, AssetFields>(
    asset ?? BLANK,
    fieldsOf,
    comparable,
    kept && { base: kept.base, draft: kept.fields },
  );
  const { name, description, active, validFrom, validTo, meta } = draft.value;
  const setMeta = (rows: MetaRow[]) => draft.update({ meta: rows });
  const nameField = useRef<HTMLInputElement>(null);
  const [key, setKey] = useState(kept?.key ?? '');
  const [tags, setTags] = useState<TagRow[]>(() => kept?.tags ?? (editing ? [] : firstTags()));
  // Kept as the form is put in the page, not in a passive effect, which runs after the next
  // paint: a press of Create right after the last keystroke could otherwise meet the ended
  // session, and leave for sign-in, before that keystroke was kept.
  useLayoutEffect(
    () => keepAsset(asset?.id, { base: draft.base, fields: draft.value, key, tags }),
    [asset?.id, draft.base, draft.value, key, tags],
  );
  const [metaProblems, setMetaProblems] = useState(new Map<number, string>());
  const { run, busy, error } = useAction(() => save());
  const errors = useFormErrors(error, (field) => INLINE.test(field));
  const prefix = asset ? `asset-${asset.id}` : 'new-asset';

  // Declared after the hook that calls it: the action runs the latest render's save.
  async function save() {
    const { metadata, problems } = metadataOf(meta);
    setMetaProblems(problems);
    if (problems.size > 0) throw new Error('Some metadata rows cannot be read; see the rows marked above.');
    const body: Record<string, unknown> = { name };
    const from = validFrom === '' ? undefined : fromLocalInput(validFrom);
    const to = validTo === '' ? null : fromLocalInput(validTo);
    if (asset) {
      // A merge patch of every update field; the times only when changed (the input keeps
      // whole seconds), and updated_at so that an edit made elsewhere meanwhile is refused.
      Object.assign(body, {
        description: description === '' ? null : description,
        is_active: active,
        metadata,
        updated_at: draft.base.updated_at,
      });
      const was = fieldsOf(draft.base);
      if (validFrom !== was.validFrom) body.valid_from = from ?? validFrom;
      if (validTo !== was.validTo) body.valid_to = to ?? validTo;
    } else {
      if (key !== '') body.external_key = key;
      if (description !== '') body.description = description;
      body.is_active = active;
      if (meta.length > 0) body.metadata = metadata;
      if (validFrom !== '') body.valid_from = from ?? validFrom;
      if (validTo !== '') body.valid_to = to ?? validTo;
      const filled = tags.filter((t) => t.value !== '');
      if (filled.length > 0) body.tags = filled.map((t) => ({ tag_type: t.type, value: t.value }));
    }
    const res = asset
      ? await api<{ data: Asset }>(`/internal/assets/${asset.id}`, { method: 'PATCH', body })
      : await api<{ data: Asset }>('/internal/assets', { method: 'POST', body });
    forgetKeptAsset(asset?.id);
    onSaved(res.data);
  }

  const setMetaRow = (i: number, change: Partial<MetaRow>) =>
    setMeta(meta.map((row, j) => (j === i ? { ...row, ...change } : row)));
  const setTagRow = (i: number, change: Partial<TagRow>) =>
    setTags(tags.map((row, j) => (j === i ? { ...row, ...change } : row)));

  const input = (field: string, id: string, hint?: string) => errors.input(field, id, hint);

  return (
    <form
      class="card asset-form"
      onSubmit={submitting(run)}
      aria-labelledby={`${prefix}-title`}
      noValidate
      {...errors.listeners}
    >
      <h2 id={`${prefix}-title`}>{editing ? 'Edit details' : 'What it is'}</h2>
      {kept && (
        <p class="alert alert-warning" role="status" id={`${prefix}-restored`}>
          Restored what you typed here earlier in this tab (before a sign-in or a reload). It is not saved
          yet; Cancel discards it.
        </p>
      )}
      <div class="row">
        <div class="field">
          <label for={`${prefix}-name`}>Name</label>
          <input
            id={`${prefix}-name`}
            ref={nameField}
            value={name}
            onInput={(e) => draft.update({ name: e.currentTarget.value })}
            {...input('name', `${prefix}-name`)}
          />
          <FieldMessage errors={errors} field="name" id={`${prefix}-name`} />
        </div>
        {!editing && (
          <div class="field">
            <label for={`${prefix}-key`}>External key</label>
            <input
              id={`${prefix}-key`}
              class="mono"
              autocapitalize="off"
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
              {...input('external_key', `${prefix}-key`, `${prefix}-key-hint`)}
            />
            <p class="hint" id={`${prefix}-key-hint`}>
              Letters, digits and hyphens. Leave empty to get the next ASSET-NNNN.
            </p>
            <FieldMessage errors={errors} field="external_key" id={`${prefix}-key`} />
          </div>
        )}
      </div>
      <DescriptionField
        id={`${prefix}-description`}
        value={description}
        errors={errors}
        onValue={(value) => draft.update({ description: value })}
      />
      <ActiveCheckbox
        id={`${prefix}-active`}
        checked={active}
        errors={errors}
        onValue={(checked) => draft.update({ active: checked })}
      />
      <div class="row">
        <div class="field">
          <label for={`${prefix}-valid-from`}>Valid from</label>
          <input
            id={`${prefix}-valid-from`}
            type="datetime-local"
            step={1}
            value={validFrom}
            onInput={(e) => draft.update({ validFrom: e.currentTarget.value })}
            {...input('valid_from', `${prefix}-valid-from`, `${prefix}-valid-from-hint`)}
          />
          <p class="hint" id={`${prefix}-valid-from-hint`}>
            {editing ? 'Your local time.' : 'Your local time; empty means from now.'}
          </p>
          <FieldMessage errors={errors} field="valid_from" id={`${prefix}-valid-from`} />
        </div>
        <div class="field">
          <label for={`${prefix}-valid-to`}>Valid until</label>
          <input
            id={`${prefix}-valid-to`}
            type="datetime-local"
            step={1}
            value={validTo}
            onInput={(e) => draft.update({ validTo: e.currentTarget.value })}
            {...input('valid_to', `${prefix}-valid-to`, `${prefix}-valid-to-hint`)}
          />
          <p class="hint" id={`${prefix}-valid-to-hint`}>
            Empty: no end.
          </p>
          <FieldMessage errors={errors} field="valid_to" id={`${prefix}-valid-to`} />
        </div>
      </div>

      <fieldset data-error-field="metadata">
        <legend>Metadata</legend>
        <p class="hint" id={`${prefix}-meta-hint`}>
          One key per row; each value is JSON: "text" in quotes, 12, true, ["a", "b"], {'{"k": 1}'}.
        </p>
        {meta.map((row, i) => {
          const id = `${prefix}-meta-${i}`;
          const problem = metaProblems.get(i);
          return (
            <div class="row meta-row" key={row.uid}>
              <div class="field">
                <label for={`${id}-key`}>Key {i + 1}</label>
                <input
                  id={`${id}-key`}
                  class="mono"
                  value={row.key}
                  onInput={(e) => setMetaRow(i, { key: e.currentTarget.value })}
                />
              </div>
              <div class="field">
                <label for={`${id}-value`}>Value {i + 1}</label>
                <input
                  id={`${id}-value`}
                  class="mono"
                  value={row.value}
                  aria-invalid={problem ? 'true' : undefined}
                  aria-describedby={problem ? `${id}-error` : `${prefix}-meta-hint`}
                  onInput={(e) => setMetaRow(i, { value: e.currentTarget.value })}
                />
                {problem && (
                  <p class="field-error" id={`${id}-error`}>
                    {problem}
                  </p>
                )}
              </div>
              <button
                type="button"
                class="button link row-remove"
                onClick={() => setMeta(meta.filter((_, j) => j !== i))}
              >
                Remove key {i + 1}
              </button>
            </div>
          );
        })}
        <FieldMessage errors={errors} field="metadata" id={`${prefix}-meta`} />
        <button
          type="button"
          class="button secondary"
          onClick={() => setMeta([...meta, { uid: rowId(), key: '', value: '' }])}
        >
          Add a metadata key
        </button>
      </fieldset>

      {!editing && (
        <fieldset>
          <legend>Tags</legend>
          {tags.map((row, i) => {
            const id = `${prefix}-tag-${i}`;
            const field = `tags[${i}].value`;
            return (
              <div class="tag-row" key={row.uid}>
                <TagFields
                  id={id}
                  label={`Tag ${i + 1}`}
                  type={row.type}
                  value={row.value}
                  onType={(type) => setTagRow(i, { type })}
                  onValue={(value) => setTagRow(i, { value })}
                  valueAttributes={input(field, `${id}-value`)}
                />
                <FieldMessage errors={errors} field={field} id={`${id}-value`} />
                <FieldMessage errors={errors} field={`tags[${i}].tag_type`} id={`${id}-type`} />
                {tags.length > 1 && (
                  <button
                    type="button"
                    class="button link row-remove"
                    onClick={() => setTags(tags.filter((_, j) => j !== i))}
                  >
                    Remove tag {i + 1}
                  </button>
                )}
              </div>
            );
          })}
          <button
            type="button"
            class="button secondary"
            onClick={() => setTags([...tags, { uid: rowId(), type: 'rfid', value: '' }])}
          >
            Add another tag
          </button>
        </fieldset>
      )}

      <DraftConflict
        id={`${prefix}-conflict`}
        what="asset"
        draft={draft}
        labels={FIELD_LABELS}
        first={nameField}
        onLoaded={() => setMetaProblems(new Map())}
      />
      <FormAlert errors={errors} />
      <div class="card-actions">
        <button type="submit" class="button primary" {...saveAttributes(draft, busy, `${prefix}-conflict`)}>
          {editing ? 'Save changes' : 'Create asset'}
        </button>
        {onCancel && (
          <button
            type="button"
            class="button secondary"
            onClick={() => {
              forgetKeptAsset(asset?.id);
              onCancel();
            }}
          >
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
