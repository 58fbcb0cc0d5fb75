import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type TagType } from '../api.js';
import { RecordActivity } from '../components/activity-list.js';
import { DraftConflict, saveAttributes } from '../components/draft-conflict.js';
import { ErrorAlert } from '../components/errors.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { isEmpty, Pager, usePaged } from '../components/paging.js';
import { ActiveCheckbox, DescriptionField } from '../components/record-fields.js';
import { TagFields, tagTypeLabel } from '../components/tag-capture.js';
import { submitting, useAction, useFocusOnceDone, useRequestThenReload } from '../components/use-action.js';
import { useDraft } from '../components/use-draft.js';
import { formatDateTime } from '../format.js';
import { useLiveRefresh } from '../live.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import { hrefWith } from '../url-state.js';
import { DeleteLocation, MoveLocation, RenameKey } from './location-actions.js';
import {
  type AssetHere,
  fromLocalInput,
  type LocationDetails,
  type LocationRecord,
  type Tag,
  toLocalInput,
} from './location-api.js';

/** The selected location: what it is, its tags, the assets at it, and every change to it. */
export function LocationPanel({
  id,
  onTreeChanged,
  onDeleted,
}: {
  id: number;
  onTreeChanged(): void;
  onDeleted(): void;
}) {
  const [details, setDetails] = useState<LocationDetails | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const editor = useCan()('editor');

  useEffect(() => {
    let live = true;
    api<LocationDetails>(`/internal/locations/${id}`)
      .then((d) => {
        if (!live) return;
        setDetails(d);
        setError(null);
      })
      .catch((e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [id, version]);
  // An edit made elsewhere (another person, an integration) shows here, and the Details form
  // says so instead of keeping a stale version silently.
  useLiveRefresh(
    () => setVersion((v) => v + 1),
    (c) => c.types.includes('location.updated') && c.location_ids.includes(id),
  );

  // Chosen in the tree on a narrow screen, the panel is below it: bring its heading into
  // view and focus, so the choice visibly (and audibly) leads somewhere.
  const heading = useRef<HTMLHeadingElement>(null);
  const loadedId = details?.data.id;
  useEffect(() => {
    if (loadedId !== id || !window.matchMedia('(max-width: 999px)').matches) return;
    if (document.activeElement?.closest('.locations-tree')) heading.current?.focus();
  }, [loadedId, id]);

  if (error) return <ErrorAlert error={error} />;
  if (!details || details.data.id !== id) return <p class="muted">Loading…</p>;
  const changed = () => {
    setVersion((v) => v + 1);
    onTreeChanged();
  };
  const l = details.data;
  return (
    <section class="location-panel" aria-labelledby="location-title">
      <nav aria-label="Path" class="crumbs">
        <ol>
          {details.path.map((p) => (
            <li key={p.id}>
              <Link href={hrefWith({ selected: p.id })}>{p.name}</Link>
            </li>
          ))}
          <li aria-current="location">{l.name}</li>
        </ol>
      </nav>
      <h2 id="location-title" ref={heading} tabIndex={-1}>
        {l.name}
      </h2>
      <dl class="facts">
        <div>
          <dt>Key</dt>
          <dd class="mono">{l.external_key}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{l.is_active ? 'active' : 'inactive'}</dd>
        </div>
        <div>
          <dt>Valid</dt>
          <dd>
            {formatDateTime(l.valid_from)} – {l.valid_to ? formatDateTime(l.valid_to) : 'no end'}
          </dd>
        </div>
        <div>
          <dt>Sub-locations</dt>
          <dd class="num">{details.descendant_count}</dd>
        </div>
      </dl>
      {l.description && <p>{l.description}</p>}
      {editor && <EditLocation key={l.id} location={l} onSaved={changed} />}
      <Tags location={l} onChanged={changed} editor={editor} />
      <AssetsHere location={l} />
      <RecordActivity type="location" id={l.id} version={version} heading="h3" />
      {editor && (
        <>
          <RenameKey key={`rename-${l.id}`} details={details} onChanged={changed} />
          <MoveLocation key={`move-${l.id}`} details={details} onChanged={changed} />
          <DeleteLocation key={`delete-${l.id}`} details={details} onDeleted={onDeleted} />
        </>
      )}
    </section>
  );
}

/** What the Details form edits, as its inputs hold it. */
interface LocationFields {
  name: string;
  description: string;
  active: boolean;
  validFrom: string;
  validTo: string;
}

const fieldsOf = (l: LocationRecord): LocationFields => ({
  name: l.name,
  description: l.description ?? '',
  active: l.is_active,
  validFrom: toLocalInput(l.valid_from),
  validTo: toLocalInput(l.valid_to),
});

const FIELD_LABELS: Record<keyof LocationFields, string> = {
  name: 'name',
  description: 'description',
  active: 'active',
  validFrom: 'valid from',
  validTo: 'valid to',
};

/** Keeps what was typed when the location changes meanwhile (useDraft). */
/** The fields the Details form has an input for, so their messages show there. */
const EDIT_FIELDS = new Set(['name', 'description', 'valid_from', 'valid_to', 'is_active']);

function EditLocation({ location, onSaved }: { location: LocationRecord; onSaved(): void }) {
  const draft = useDraft(location, fieldsOf);
  const { name, description, active, validFrom, validTo } = draft.value;
  const id = `edit-${location.id}`;
  const nameField = useRef<HTMLInputElement>(null);

  const { run, busy, error } = useAction(async () => {
    // A merge patch of what changed since the version the draft started from; its
    // updated_at makes an edit made elsewhere meanwhile an explicit refusal.
    const was = fieldsOf(draft.base);
    const body: Record<string, unknown> = { updated_at: draft.base.updated_at };
    if (name !== was.name) body.name = name;
    if (description !== was.description) body.description = description === '' ? null : description;
    if (active !== was.active) body.is_active = active;
    if (validFrom !== was.validFrom) body.valid_from = fromLocalInput(validFrom);
    if (validTo !== was.validTo) body.valid_to = validTo === '' ? null : fromLocalInput(validTo);
    await api(`/internal/locations/${location.id}`, { method: 'PATCH', body });
    onSaved();
  });
  // The API's message for a field goes under that field, as on the asset form: an alert
  // above the button left the person to find which of the fields it meant.
  const errors = useFormErrors(error, (field) => EDIT_FIELDS.has(field));

  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby={`${id}-title`} {...errors.listeners}>
      <h3 id={`${id}-title`}>Details</h3>
      <div class="field">
        <label for={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          ref={nameField}
          required
          value={name}
          {...errors.input('name', `${id}-name`)}
          onInput={(e) => draft.update({ name: e.currentTarget.value })}
        />
        <FieldMessage errors={errors} field="name" id={`${id}-name`} />
      </div>
      <DescriptionField
        id={`${id}-description`}
        value={description}
        errors={errors}
        onValue={(value) => draft.update({ description: value })}
      />
      <ActiveCheckbox
        id={`${id}-active`}
        checked={active}
        errors={errors}
        onValue={(checked) => draft.update({ active: checked })}
      />
      <div class="row">
        <div class="field">
          <label for={`${id}-from`}>Valid from</label>
          <input
            id={`${id}-from`}
            type="datetime-local"
            value={validFrom}
            {...errors.input('valid_from', `${id}-from`)}
            onInput={(e) => draft.update({ validFrom: e.currentTarget.value })}
          />
          <FieldMessage errors={errors} field="valid_from" id={`${id}-from`} />
        </div>
        <div class="field">
          <label for={`${id}-to`}>Valid to</label>
          <input
            id={`${id}-to`}
            type="datetime-local"
            value={validTo}
            {...errors.input('valid_to', `${id}-to`, `${id}-to-hint`)}
            onInput={(e) => draft.update({ validTo: e.currentTarget.value })}
          />
          <p class="hint" id={`${id}-to-hint`}>
            Empty: no end. Times are in your time zone.
          </p>
          <FieldMessage errors={errors} field="valid_to" id={`${id}-to`} />
        </div>
      </div>
      <DraftConflict
        id={`${id}-conflict`}
        what="location"
        draft={draft}
        labels={FIELD_LABELS}
        first={nameField}
      />
      <FormAlert errors={errors} />
      <button type="submit" class="button primary" {...saveAttributes(draft, busy, `${id}-conflict`)}>
        Save details
      </button>
    </form>
  );
}

function Tags({
  location,
  onChanged,
  editor,
}: {
  location: LocationRecord;
  onChanged(): void;
  /** Whether tags may be attached and detached here (the editor role). */
  editor: boolean;
}) {
  const [type, setType] = useState<TagType>('rfid');
  const [value, setValue] = useState('');
  // Attach and Detach are disabled while one runs and until the reload it asked for shows:
  // a second click would send it again (and show the second answer's "already attached" or 404).
  const { run, busy, error } = useRequestThenReload(onChanged, location);
  const id = `tags-${location.id}`;
  // As on the asset page: a refused value or type is said under its field.
  const errors = useFormErrors(error, (f) => f === 'tag_type' || f === 'value');
  // Attached, the value field is ready for the next tag; detached, the heading leads into
  // the tags left.
  const focusOnceDone = useFocusOnceDone(busy);

  const attach = async (event: Event) => {
    event.preventDefault();
    focusOnceDone(() => document.getElementById(`${id}-value`));
    const body = { tag_type: type, value: value.trim() };
    if (await run(() => api(`/internal/locations/${location.id}/tags`, { method: 'POST', body })))
      setValue('');
  };
  const detach = (tag: Tag) => {
    focusOnceDone(() => document.getElementById(`${id}-title`));
    return run(() => api(`/internal/locations/${location.id}/tags/${tag.id}`, { method: 'DELETE' }));
  };

  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} tabIndex={-1}>
        Tags
      </h3>
      {location.tags.length === 0 ? (
        <p class="muted">No tags: readers and handhelds can name this location by its key only.</p>
      ) : (
        <ul class="tag-list">
          {location.tags.map((t) => (
            <li key={t.id}>
              <span class="badge tag-kind">{tagTypeLabel(t.tag_type)}</span>{' '}
              <span class="mono">{t.value}</span>
              {editor && (
                <button
                  type="button"
                  class="button link"
                  aria-label={`Detach ${tagTypeLabel(t.tag_type)} tag ${t.value}`}
                  disabled={busy}
                  onClick={() => detach(t)}
                >
                  Detach
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {editor ? (
        <form onSubmit={attach} aria-label="Attach a tag" noValidate {...errors.listeners}>
          <TagFields
            id={id}
            type={type}
            value={value}
            onType={setType}
            onValue={setValue}
            typeAttributes={errors.input('tag_type', `${id}-type`)}
            valueAttributes={errors.input('value', `${id}-value`)}
          />
          <FieldMessage errors={errors} field="value" id={`${id}-value`} />
          <FieldMessage errors={errors} field="tag_type" id={`${id}-type`} />
          <FormAlert errors={errors} />
          <button type="submit" class="button secondary" disabled={busy}>
            Attach tag
          </button>
        </form>
      ) : (
        <ErrorAlert error={error} />
      )}
    </section>
  );
}

function AssetsHere({ location }: { location: LocationRecord }) {
  const assets = usePaged<AssetHere>(`/internal/locations/${location.id}/assets`, {}, 10);
  return (
    <section class="card" aria-labelledby={`assets-${location.id}-title`} id="assets-here">
      <h3 id={`assets-${location.id}-title`}>Assets here now</h3>
      <ErrorAlert error={assets.error} />
      {isEmpty(assets) && (
        <p class="muted">No asset is placed at this location (sub-locations not counted).</p>
      )}
      <ul class="asset-links">
        {assets.rows.map((a) => (
          <li key={a.id}>
            <Link href={`/assets/${a.id}`}>{a.name}</Link> <span class="mono muted">{a.external_key}</span>
            <span class="muted"> · last seen {formatDateTime(a.last_seen_at, 'never')}</span>
          </li>
        ))}
      </ul>
      {assets.total > assets.limit && <Pager paged={assets} label={`Assets at ${location.name}`} />}
    </section>
  );
}
