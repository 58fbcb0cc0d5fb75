import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiKey, api } from '../api.js';
import { ConfirmedAction } from '../components/confirm.js';
import { CopyField } from '../components/copy-field.js';
import { ErrorAlert } from '../components/errors.js';
import { EmptyRow, ListSection, TableHead } from '../components/list-layout.js';
import { PageHeader } from '../components/page.js';
import { usePaged } from '../components/paging.js';
import { ShownOncePanel } from '../components/shown-once.js';
import { TableWrap } from '../components/table-wrap.js';
import { TextField } from '../components/text-field.js';
import { focusLost, submitting, useAction } from '../components/use-action.js';
import { formatDate, formatDateTime } from '../format.js';
import { type Expiry, expiresAt, lastExpiryDate, today } from './key-expiry.js';

type Access = 'none' | 'read' | 'write';

const RESOURCES: { id: 'assets' | 'locations' | 'tracking'; label: string; writable: boolean }[] = [
  { id: 'assets', label: 'Assets', writable: true },
  { id: 'locations', label: 'Locations', writable: true },
  { id: 'tracking', label: 'Tracking (history and report)', writable: false },
];

const ACCESS_LABEL: Record<Access, string> = { none: 'None', read: 'Read', write: 'Read and write' };

export function scopesFor(access: Record<string, Access>): string[] {
  const scopes: string[] = [];
  for (const { id } of RESOURCES) {
    const level = access[id] ?? 'none';
    if (level === 'read' || level === 'write') scopes.push(`${id}:read`);
    if (level === 'write') scopes.push(`${id}:write`);
  }
  return scopes;
}

function MintedKey({ name, token, onDone }: { name: string; token: string; onDone(): void }) {
  return (
    <ShownOncePanel
      titleId="minted-title"
      title={`Key “${name}” created`}
      doneLabel="I have stored the key"
      onDone={onDone}
    >
      <p>
        Copy the key now. It is shown <strong>only once</strong>: the service keeps no copy it could show
        again.
      </p>
      <CopyField id="minted-token" label="API key" value={token} />
    </ShownOncePanel>
  );
}

function MintForm({ onMinted }: { onMinted(name: string, token: string): void }) {
  const [name, setName] = useState('');
  const [access, setAccess] = useState<Record<string, Access>>({
    assets: 'read',
    locations: 'read',
    tracking: 'read',
  });
  const [expiry, setExpiry] = useState<Expiry>('90');
  const [date, setDate] = useState('');
  const last = lastExpiryDate();

  const { run, busy, error } = useAction(async () => {
    const res = await api<{ data: ApiKey; token: string }>('/internal/keys', {
      method: 'POST',
      body: { name, scopes: scopesFor(access), expires_at: expiresAt(expiry, date) },
    });
    onMinted(res.data.name, res.token);
    setName('');
  });

  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby="mint-title">
      <h2 id="mint-title">Create an API key</h2>
      <div class="field name-field">
        <label for="key-name">Name</label>
        <input
          id="key-name"
          required
          maxLength={255}
          value={name}
          placeholder="e.g. ERP integration"
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </div>
      <div class="scope-grid">
        {RESOURCES.map((r) => (
          <fieldset key={r.id} class="radio-group">
            <legend>{r.label}</legend>
            {(r.writable ? (['none', 'read', 'write'] as const) : (['none', 'read'] as const)).map(
              (level) => (
                <label key={level} class="radio">
                  <input
                    type="radio"
                    name={`scope-${r.id}`}
                    value={level}
                    checked={access[r.id] === level}
                    onChange={() => setAccess({ ...access, [r.id]: level })}
                  />
                  {ACCESS_LABEL[level]}
                </label>
              ),
            )}
          </fieldset>
        ))}
      </div>
      <div class="row compact">
        <div class="field">
          <label for="key-expiry">Expires</label>
          <select id="key-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value as Expiry)}>
            <option value="never">Never</option>
            <option value="30">In 30 days</option>
            <option value="90">In 90 days</option>
            <option value="365">In 1 year</option>
            <option value="date">On a date…</option>
          </select>
        </div>
        {expiry === 'date' && (
          <TextField
            id="key-expiry-date"
            label="Expiry date"
            type="date"
            required
            min={today()}
            max={last}
            hint={`The key stops working at the end of that day (your time zone); ${formatDate(expiresAt('date', last))} at the latest, ten years (3650 days) from now.`}
            value={date}
            onValue={setDate}
          />
        )}
      </div>
      <p class="hint">Keys never get the key-administration scope; manage keys here.</p>
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}

function StatusBadge({ status, id }: { status: ApiKey['status']; id?: string }) {
  return (
    <span class={`badge badge-${status}`} id={id} tabIndex={id ? -1 : undefined}>
      {status}
    </span>
  );
}

function KeyRow({ item, onRevoked }: { item: ApiKey; onRevoked(): void }) {
  const [confirming, setConfirming] = useState(false);
  // Revoked, the row loses its Revoke (and the question), with the focus in it: it fell to
  // the page body. Once the reload shows the key revoked, its status takes the focus.
  const revoked = useRef(false);
  const statusId = `key-${item.id}-status`;
  useEffect(() => {
    if (!revoked.current || item.status === 'active') return;
    revoked.current = false;
    if (focusLost()) document.getElementById(statusId)?.focus();
  }, [item.status]);
  const {
    run: revoke,
    busy,
    error,
  } = useAction(async () => {
    await api(`/internal/keys/${encodeURIComponent(item.id)}/revoke`, { method: 'POST' });
    revoked.current = true;
    setConfirming(false);
    onRevoked();
  });
  return (
    <tr>
      <th scope="row">{item.name}</th>
      <td>
        {item.scopes.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          <ul class="chips">
            {item.scopes.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        )}
      </td>
      <td>
        {formatDate(item.created_at)}
        <br />
        <span class="muted">
          {item.created_by
            ? `by ${item.created_by.email}${item.created_by.removed ? ' (removed)' : ''}`
            : 'by an operator'}
        </span>
      </td>
      <td>{item.expires_at ? formatDate(item.expires_at) : 'never'}</td>
      <td>{formatDateTime(item.last_used_at, 'never')}</td>
      <td>
        <StatusBadge status={item.status} id={statusId} />
      </td>
      <td class="actions">
        {item.status === 'active' && (
          <ConfirmedAction
            label="Revoke"
            ariaLabel={`Revoke ${item.name}`}
            asking={confirming}
            onAsking={setConfirming}
            question={`Revoke “${item.name}”?`}
            yes="Yes, revoke"
            busy={busy}
            onYes={revoke}
          />
        )}
        <ErrorAlert error={error} />
      </td>
    </tr>
  );
}

export function KeysPage() {
  const keys = usePaged<ApiKey>('/internal/keys', {}, 20, { urlPage: true });
  const [minted, setMinted] = useState<{ name: string; token: string } | null>(null);

  return (
    <main id="main">
      <PageHeader title="API keys" />
      {minted ? (
        <MintedKey name={minted.name} token={minted.token} onDone={() => setMinted(null)} />
      ) : (
        <MintForm
          onMinted={(name, token) => {
            setMinted({ name, token });
            keys.reload();
          }}
        />
      )}
      <ListSection id="keys" title="Keys" list={keys} pagerLabel="Keys">
        <TableWrap label="Keys">
          <table>
            <TableHead
              columns={['Name', 'Scopes', 'Created (by)', 'Expires', 'Last used', 'Status']}
              actions
            />
            <tbody>
              {keys.rows.map((k) => (
                <KeyRow key={k.id} item={k} onRevoked={keys.reload} />
              ))}
              <EmptyRow list={keys} columns={7}>
                No keys yet.
              </EmptyRow>
            </tbody>
          </table>
        </TableWrap>
      </ListSection>
    </main>
  );
}
