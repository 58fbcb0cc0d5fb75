import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Asset, type AssetDetail, api, type Tag, type TagType } from '../api.js';
import { RecordActivity } from '../components/activity-list.js';
import { ErrorAlert } from '../components/errors.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { PageHeader } from '../components/page.js';
import { TableWrap } from '../components/table-wrap.js';
import { TagFields, tagTypeLabel } from '../components/tag-capture.js';
import { useAction, useFocusOnceDone, useUntilReloaded } from '../components/use-action.js';
import { formatDateTime } from '../format.js';
import { useLiveRefresh } from '../live.js';
import { Link, navigate } from '../router.js';
import { useCan } from '../session.js';
import { AssetForm } from './asset-form.js';
import { restoreKeptAsset } from './asset-kept.js';
import { KeyAndDelete } from './asset-key.js';
import { Timeline } from './asset-timeline.js';

/** An asset's own page (`/assets/:id`): what it is, its tags, where it is now and where it has been. */

function WhereNow({ asset }: { asset: AssetDetail }) {
  if (asset.location_id === null) {
    return <p class="empty">Not seen anywhere yet.</p>;
  }
  const path = asset.location_path;
  return (
    <dl class="facts where-now">
      <div>
        <dt>Location</dt>
        <dd>
          <strong>
            <Link href={`/locations?selected=${asset.location_id}`}>
              {asset.location_name ?? 'a retired location'}
            </Link>
          </strong>
          {asset.location_external_key && <span class="mono muted"> ({asset.location_external_key})</span>}
          {path.length > 1 && (
            <span class="location-path">
              In{' '}
              {path.slice(0, -1).map((step, i) => (
                <span key={step.id}>
                  {i > 0 && ' › '}
                  <Link href={`/locations?selected=${step.id}`}>{step.name}</Link>
                </span>
              ))}
            </span>
          )}
        </dd>
      </div>
      <div>
        <dt>There since</dt>
        <dd>{formatDateTime(asset.located_since)}</dd>
      </div>
      <div>
        <dt>Last seen</dt>
        <dd>{formatDateTime(asset.last_seen_at, 'never')}</dd>
      </div>
    </dl>
  );
}

function TagList({ asset, onChanged }: { asset: AssetDetail; onChanged(): void }) {
  const can = useCan();
  const [type, setType] = useState<TagType>('rfid');
  const [value, setValue] = useState('');
  // Attach and Detach share one action: disabled while either runs and until the reload
  // shows, a second click would send the DELETE again and show its 404.
  const reload = useUntilReloaded(asset);
  const action = useAction((request: () => Promise<unknown>) => request());
  const { run, error } = action;
  const busy = action.busy || reload.waiting;
  const errors = useFormErrors(error, (f) => f === 'tag_type' || f === 'value');
  // Attached, the value field is ready for the next tag; detached, the heading leads into
  // the tags left.
  const focusOnceDone = useFocusOnceDone(busy);

  const attach = (event: Event) => {
    event.preventDefault();
    focusOnceDone(() => document.getElementById('attach-tag-value'));
    void run(async () => {
      await api<{ data: Tag }>(`/internal/assets/${asset.id}/tags`, {
        method: 'POST',
        body: { tag_type: type, value },
      });
      setValue('');
      reload.changed();
      onChanged();
    });
  };
  const detach = (tag: Tag) => {
    focusOnceDone(() => document.getElementById('tags-title'));
    return run(async () => {
      await api(`/internal/assets/${asset.id}/tags/${tag.id}`, { method: 'DELETE' });
      reload.changed();
      onChanged();
    });
  };

  return (
    <section class="card" aria-labelledby="tags-title">
      <h2 id="tags-title" tabIndex={-1}>
        Tags
      </h2>
      {asset.tags.length === 0 ? (
        <p class="muted">No tags attached.</p>
      ) : (
        <ul class="tag-list">
          {asset.tags.map((tag) => (
            <li key={tag.id}>
              <span class="badge tag-kind">{tagTypeLabel(tag.tag_type)}</span>
              <span class="mono">{tag.value}</span>
              {can('editor') && (
                <button
                  type="button"
                  class="button link"
                  aria-label={`Detach ${tagTypeLabel(tag.tag_type)} ${tag.value}`}
                  disabled={busy}
                  onClick={() => detach(tag)}
                >
                  Detach
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {can('editor') && (
        <form onSubmit={attach} aria-label="Attach a tag" noValidate {...errors.listeners}>
          <TagFields
            id="attach-tag"
            label="New tag"
            type={type}
            value={value}
            onType={setType}
            onValue={setValue}
            typeAttributes={errors.input('tag_type', 'attach-tag-type')}
            valueAttributes={errors.input('value', 'attach-tag-value')}
          />
          <FieldMessage errors={errors} field="value" id="attach-tag-value" />
          <FieldMessage errors={errors} field="tag_type" id="attach-tag-type" />
          <FormAlert errors={errors} />
          <button type="submit" class="button secondary" disabled={busy}>
            Attach tag
          </button>
        </form>
      )}
    </section>
  );
}

function Details({ asset, onSaved }: { asset: AssetDetail; onSaved(asset: Asset): void }) {
  const can = useCan();
  // Open when changes typed here were kept (the session ended mid-edit, or a reload): the
  // form shows them with a notice, and the draft rules guard what changed meanwhile.
  const [editing, setEditing] = useState(() => can('editor') && restoreKeptAsset(asset.id) !== undefined);
  // The button that opens the form, and the form that replaces it, each go away with the
  // focus in them: it fell to the page body. Opened, the focus goes to the form's first
  // field; closed (saved or cancelled), back to Edit details. Compared with the last value
  // the effect saw, not a flag set on click: a click before the first render's effect ran
  // (a fast keyboard, a loaded machine) had that effect take the flag and focus the
  // departing button, and the form opened with the focus on the page body.
  // A layout effect, run as the form is put in the page: a passive effect runs after the
  // next paint, which on a loaded machine came after the person (or a test) had already
  // clicked into another field and started typing, and the rest of the typing went into the
  // name (a weight typed as "eighty" saved the name "Pallet jackeighty").
  const shown = useRef(editing);
  const editButton = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (shown.current === editing) return;
    shown.current = editing;
    if (editing) document.getElementById(`asset-${asset.id}-name`)?.focus();
    else editButton.current?.focus();
  }, [editing, asset.id]);
  if (editing) {
    return (
      <AssetForm
        asset={asset}
        onSaved={(saved) => {
          setEditing(false);
          onSaved(saved);
        }}
        onCancel={() => setEditing(false)}
      />
    );
  }
  const entries = Object.entries(asset.metadata);
  return (
    <section class="card" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <dl class="facts">
        <div>
          <dt>Description</dt>
          <dd>{asset.description ?? <span class="muted">none</span>}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{asset.is_active ? 'active' : 'inactive'}</dd>
        </div>
        <div>
          <dt>Valid from</dt>
          <dd>{formatDateTime(asset.valid_from)}</dd>
        </div>
        <div>
          <dt>Valid until</dt>
          <dd>{formatDateTime(asset.valid_to, 'no end')}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>{formatDateTime(asset.updated_at)}</dd>
        </div>
      </dl>
      {entries.length > 0 && (
        <TableWrap label="Metadata">
          <table>
            <caption>Metadata</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value (JSON)</th>
              </tr>
            </thead>
            <tbody>
              {entries.map(([key, value]) => (
                <tr key={key}>
                  <th scope="row" class="mono">
                    {key}
                  </th>
                  <td class="mono">{JSON.stringify(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {can('editor') && (
        <button type="button" class="button secondary" ref={editButton} onClick={() => setEditing(true)}>
          Edit details
        </button>
      )}
    </section>
  );
}

export function AssetPage({ assetId }: { assetId: string }) {
  const can = useCan();
  const [asset, setAsset] = useState<AssetDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const id = Number(assetId);

  // Loads overlap (a save's and a live refresh's): only the latest one's answer is shown,
  // or an earlier answer arriving last would put the asset as it was back on the page.
  const latest = useRef(0);
  const load = useCallback(() => {
    const mine = ++latest.current;
    api<{ data: AssetDetail }>(`/internal/assets/${encodeURIComponent(assetId)}`)
      .then((res) => {
        if (mine !== latest.current) return;
        setAsset(res.data);
        setError(null);
      })
      .catch((e: unknown) => {
        if (mine === latest.current) setError(e);
      });
  }, [assetId]);
  useEffect(load, [load]);
  const changed = () => {
    load();
    setVersion((v) => v + 1);
  };
  // A read of this asset (or an edit elsewhere) updates the page and its timeline in place.
  useLiveRefresh(changed, (c) => c.asset_ids.includes(id));

  if (error && !asset) {
    const missing = error instanceof ApiError && (error.status === 404 || error.status === 400);
    return (
      <main id="main">
        <PageHeader title={missing ? 'Asset not found' : 'Asset'} />
        {missing ? <p>This asset does not exist, or it was deleted.</p> : <ErrorAlert error={error} />}
        <p>
          <Link href="/assets">← All assets</Link>
        </p>
      </main>
    );
  }
  if (!asset) {
    return (
      <main id="main">
        <PageHeader title="Asset" />
        <p class="loading" role="status">
          Loading…
        </p>
      </main>
    );
  }
  return (
    <main id="main" class="asset-page">
      <PageHeader title={asset.name}>
        <p class="asset-sub">
          <span class="mono">{asset.external_key}</span>{' '}
          <span class={`badge ${asset.is_active ? 'badge-active' : 'badge-expired'}`}>
            {asset.is_active ? 'active' : 'inactive'}
          </span>
        </p>
      </PageHeader>
      <p>
        <Link href="/assets">← All assets</Link>
      </p>
      <ErrorAlert error={error} />
      <section class="card" aria-labelledby="where-title">
        <h2 id="where-title">Where it is now</h2>
        <WhereNow asset={asset} />
      </section>
      <TagList asset={asset} onChanged={changed} />
      <Details asset={asset} onSaved={changed} />
      {can('editor') && <KeyAndDelete asset={asset} onRenamed={changed} />}
      <Timeline assetId={id} version={version} />
      <RecordActivity type="asset" id={id} version={version} />
    </main>
  );
}

export function NewAssetPage() {
  return (
    <main id="main">
      <PageHeader title="New asset" />
      <p>
        <Link href="/assets">← All assets</Link>
      </p>
      <AssetForm
        onSaved={(created) => navigate(`/assets/${created.id}`, { replace: true })}
        onCancel={() => navigate('/assets')}
      />
    </main>
  );
}
