import { useState } from 'preact/hooks';
import { api, type LocationOption } from '../api.js';
import { ConfirmedAction } from '../components/confirm.js';
import { CopyField } from '../components/copy-field.js';
import { ErrorAlert } from '../components/errors.js';
import { useKeptInput } from '../components/kept-input.js';
import { EmptyRow, focusListTitle, ListSection, TableHead } from '../components/list-layout.js';
import { LocationPicker } from '../components/location-picker.js';
import { PageHeader } from '../components/page.js';
import { isEmpty, Pager, usePaged } from '../components/paging.js';
import { ShownOncePanel } from '../components/shown-once.js';
import { TableWrap } from '../components/table-wrap.js';
import { submitting, useAction, useRequestThenReload } from '../components/use-action.js';
import { formatDateTime } from '../format.js';

/** The event types an endpoint can ask for (docs/events.md). */
const EVENT_TYPES: { id: string; label: string }[] = [
  { id: 'asset.moved', label: 'Asset moved' },
  { id: 'asset.first_seen', label: 'Asset seen for the first time' },
  { id: 'asset.not_seen', label: 'Asset not seen for a while' },
  { id: 'asset.created', label: 'Asset created' },
  { id: 'asset.updated', label: 'Asset updated' },
  { id: 'asset.deleted', label: 'Asset deleted' },
  { id: 'location.created', label: 'Location created' },
  { id: 'location.updated', label: 'Location updated' },
  { id: 'location.deleted', label: 'Location deleted' },
  { id: 'tag.attached', label: 'Tag attached' },
  { id: 'tag.detached', label: 'Tag detached' },
];

interface Endpoint {
  id: number;
  url: string;
  event_types: string[];
  location_id: number | null;
  enabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  pending_deliveries: number;
}

interface Delivery {
  id: number;
  event_id: string;
  event_type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  next_attempt_at: string | null;
}

function Secret({ url, secret, onDone }: { url: string; secret: string; onDone(): void }) {
  return (
    <ShownOncePanel
      titleId="secret-title"
      title="Endpoint added"
      doneLabel="I have stored the secret"
      onDone={onDone}
    >
      <p>
        Deliveries to <span class="mono">{url}</span> are signed with this secret (Standard Webhooks). Copy it
        now into the receiver: it is shown <strong>only once</strong>.
      </p>
      <CopyField id="webhook-secret" label="Signing secret" value={secret} />
    </ShownOncePanel>
  );
}

function AddEndpoint({ onAdded }: { onAdded(url: string, secret: string): void }) {
  const [url, setUrl, clearUrl] = useKeptInput('webhook.url', '');
  const [types, setTypes, clearTypes] = useKeptInput<string[]>('webhook.types', ['asset.moved']);
  const [location, setLocation, clearLocation] = useKeptInput<LocationOption | null>(
    'webhook.location',
    null,
  );
  const { run, busy, error } = useAction(async () => {
    const res = await api<{ data: Endpoint; secret: string }>('/internal/webhooks', {
      method: 'POST',
      body: { url, event_types: types, location_id: location?.id ?? null },
    });
    onAdded(res.data.url, res.secret);
    clearUrl();
    clearTypes();
    clearLocation();
  });
  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby="add-webhook-title">
      <h2 id="add-webhook-title">Add an endpoint</h2>
      <div class="field">
        <label for="webhook-url">URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          maxLength={2048}
          value={url}
          placeholder="https://erp.example.com/tagtrail-events"
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </div>
      <fieldset class="radio-group">
        <legend>Events</legend>
        {EVENT_TYPES.map((t) => (
          <label key={t.id} class="checkbox">
            <input
              type="checkbox"
              checked={types.includes(t.id)}
              onChange={(e) =>
                setTypes(e.currentTarget.checked ? [...types, t.id] : types.filter((x) => x !== t.id))
              }
            />{' '}
            {t.label} <span class="mono muted">{t.id}</span>
          </label>
        ))}
      </fieldset>
      <LocationPicker
        id="webhook-location"
        label="Only events at this location or below it (optional)"
        value={location}
        onChange={setLocation}
      />
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy || types.length === 0}>
        Add endpoint
      </button>
    </form>
  );
}

function DeliveryLog({ endpoint }: { endpoint: Endpoint }) {
  const log = usePaged<Delivery>(`/internal/webhooks/${endpoint.id}/deliveries`, {}, 20);
  const [error, setError] = useState<unknown>(null);
  // The delivery being sent again: its button is disabled until the answer, so a double
  // click does not queue it twice.
  const [sending, setSending] = useState<number | null>(null);
  const redeliver = async (d: Delivery) => {
    setSending(d.id);
    setError(null);
    try {
      await api(`/internal/webhooks/${endpoint.id}/deliveries/${d.id}/redeliver`, { method: 'POST' });
      log.reload();
    } catch (e) {
      setError(e);
    } finally {
      setSending(null);
    }
  };
  return (
    <TableWrap label={`Deliveries to ${endpoint.url}`} busy={log.loading}>
      <ErrorAlert error={error ?? log.error} />
      <table>
        <caption>Deliveries to {endpoint.url}, newest first</caption>
        <TableHead columns={['Event', 'State', 'Attempts', 'Last answer', 'Response time']} actions />
        <tbody>
          {log.rows.map((d) => (
            <tr key={d.id}>
              <th scope="row">
                {d.event_type} <span class="mono muted">{d.event_id}</span>
              </th>
              <td>
                {d.state}
                {d.state === 'pending' && d.next_attempt_at && (
                  <span class="muted"> (next try {formatDateTime(d.next_attempt_at)})</span>
                )}
              </td>
              <td>{d.attempts}</td>
              <td>{d.last_status ?? d.last_error ?? '—'}</td>
              <td>{d.last_duration_ms === null ? '—' : `${d.last_duration_ms} ms`}</td>
              <td>
                <button
                  type="button"
                  class="button secondary"
                  disabled={sending === d.id}
                  onClick={() => redeliver(d)}
                >
                  Send again
                </button>
              </td>
            </tr>
          ))}
          <EmptyRow list={log} columns={6}>
            Nothing sent yet.
          </EmptyRow>
        </tbody>
      </table>
      <Pager paged={log} label="Deliveries" />
    </TableWrap>
  );
}

function EndpointCard({ endpoint, onChanged }: { endpoint: Endpoint; onChanged(): void }) {
  const [open, setOpen] = useState(false);
  // Enable/Disable waits for the answer: the label changes only once the list has reloaded,
  // and a second click meanwhile would send the same change again.
  const { run: change, busy, error } = useRequestThenReload(onChanged);
  // Delete cannot be undone (the endpoint's secret and deliveries go with it): it asks first,
  // as every such action in the app does; it did not. Once deleted, the card goes with the
  // focus on its "Yes, delete", which fell to the page body: the Endpoints heading takes it,
  // leading into the endpoints left. A refusal closes the question, the error under it.
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(
    async () => {
      await api(`/internal/webhooks/${endpoint.id}`, { method: 'DELETE' });
      focusListTitle('endpoints');
      onChanged();
    },
    { onError: () => setConfirming(false) },
  );
  const titleId = `webhook-${endpoint.id}-title`;
  return (
    <article class="card" aria-labelledby={titleId}>
      <h3 id={titleId} class="mono">
        {endpoint.url}
      </h3>
      <p>
        {endpoint.enabled ? 'Enabled' : 'Disabled'} · {endpoint.event_types.join(', ')}
        {endpoint.location_id !== null && ` · location ${endpoint.location_id} and below`} ·{' '}
        {endpoint.pending_deliveries} waiting
      </p>
      {endpoint.disabled_reason && <p class="alert">{endpoint.disabled_reason}</p>}
      {endpoint.enabled && endpoint.failing_since && (
        <p class="alert">Failing since {formatDateTime(endpoint.failing_since)}; retried with backoff.</p>
      )}
      <ErrorAlert error={error ?? remove.error} />
      <div class="actions">
        <button
          type="button"
          class="button secondary"
          disabled={busy || remove.busy}
          onClick={() =>
            change(() =>
              api(`/internal/webhooks/${endpoint.id}`, {
                method: 'PATCH',
                body: { enabled: !endpoint.enabled },
              }),
            )
          }
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="button secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Show deliveries'}
        </button>
        <ConfirmedAction
          label="Delete"
          ariaLabel={`Delete ${endpoint.url}`}
          danger
          asking={confirming}
          onAsking={setConfirming}
          question={`Delete the endpoint ${endpoint.url}? Events stop going there, and its waiting deliveries are dropped.`}
          yes="Yes, delete"
          busy={remove.busy || busy}
          onYes={remove.run}
        />
      </div>
      {open && <DeliveryLog endpoint={endpoint} />}
    </article>
  );
}

/** Webhook endpoints (administrators): where tagtrail sends its events (docs/events.md). */
export function WebhooksPage() {
  const endpoints = usePaged<Endpoint>('/internal/webhooks', {}, 50);
  const [added, setAdded] = useState<{ url: string; secret: string } | null>(null);
  return (
    <main id="main">
      <PageHeader title="Webhooks" />
      <p class="lead">
        tagtrail posts each event (an asset moved, a location changed, …) to the endpoints below, signed with
        the endpoint's secret, retried for a day until the receiver answers 2xx.
      </p>
      {added ? (
        <Secret url={added.url} secret={added.secret} onDone={() => setAdded(null)} />
      ) : (
        <AddEndpoint
          onAdded={(url, secret) => {
            setAdded({ url, secret });
            endpoints.reload();
          }}
        />
      )}
      <ListSection id="endpoints" title="Endpoints" list={endpoints} pagerLabel="Endpoints">
        {isEmpty(endpoints) && <p class="empty">No endpoints yet.</p>}
        {endpoints.rows.map((e) => (
          <EndpointCard key={e.id} endpoint={e} onChanged={endpoints.reload} />
        ))}
      </ListSection>
    </main>
  );
}
