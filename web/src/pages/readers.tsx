import { useState } from 'preact/hooks';
import { api, type LocationOption, type Reader, type ScanPoint } from '../api.js';
import { BrokerAddress } from '../components/broker-address.js';
import { ErrorAlert } from '../components/errors.js';
import { LocationPicker, locationLabel } from '../components/location-picker.js';
import { PageHeader } from '../components/page.js';
import { Pager, usePaged } from '../components/paging.js';
import { MqttAccess, SecretsShown, type ShownSecrets } from '../components/reader-credentials.js';
import { ReaderProblems } from '../components/reader-problems.js';
import { TextField } from '../components/text-field.js';
import { formatDateTime } from '../format.js';

const FAMILIES: { id: string; label: string }[] = [
  { id: 'impinj-r700', label: 'Impinj R700' },
  { id: 'zebra-fx', label: 'Zebra FX' },
  { id: 'csl-cs463', label: 'CSL CS463' },
  { id: 'generic-json', label: 'Generic JSON' },
];

function AddReader({ onAdded }: { onAdded(shown: ShownSecrets): void }) {
  const [name, setName] = useState('');
  const [family, setFamily] = useState('impinj-r700');
  const [identity, setIdentity] = useState('');
  const [topic, setTopic] = useState('');
  const [webhook, setWebhook] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await api<{ data: Reader; webhook_secret?: string; mqtt_password: string }>(
        '/internal/readers',
        {
          method: 'POST',
          body: { name, family, identity, topic, webhook },
        },
      );
      setName('');
      setIdentity('');
      setTopic('');
      setWebhook(false);
      onAdded({
        reader: res.data,
        mqttPassword: res.mqtt_password,
        webhookSecret: res.webhook_secret ?? null,
      });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card" onSubmit={submit} aria-labelledby="add-reader-title">
      <h2 id="add-reader-title">Add a reader</h2>
      <div class="row">
        <div class="field">
          <label for="reader-name">Name</label>
          <input id="reader-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="reader-family">Family</label>
          <select id="reader-family" value={family} onChange={(e) => setFamily(e.currentTarget.value)}>
            {FAMILIES.map((f) => (
              <option key={f.id} value={f.id}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div class="row">
        <div class="field">
          <label for="reader-identity">Identity</label>
          <input
            id="reader-identity"
            required
            aria-describedby="reader-identity-hint"
            value={identity}
            onInput={(e) => setIdentity(e.currentTarget.value)}
          />
          <p class="hint" id="reader-identity-hint">
            The reader's own name or serial, as it appears in its messages.
          </p>
        </div>
        <TextField
          id="reader-topic"
          label="MQTT topic"
          required
          class="mono"
          placeholder="site/dock-1/reads"
          value={topic}
          onValue={setTopic}
        />
      </div>
      <label class="checkbox">
        <input type="checkbox" checked={webhook} onChange={(e) => setWebhook(e.currentTarget.checked)} />
        Also accept reads over the HTTP webhook (issues a secret, shown once)
      </label>
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Add reader
      </button>
    </form>
  );
}

function ScanPointRow({ reader, point, onChanged }: { reader: Reader; point: ScanPoint; onChanged(): void }) {
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    try {
      await api(`/internal/readers/${reader.id}/scan-points/${point.id}`, { method: 'DELETE' });
      onChanged();
    } catch (e) {
      setError(e);
    }
  };
  const antenna = point.antenna === null ? 'Any antenna' : `Antenna ${point.antenna}`;
  return (
    <li>
      <span>
        {antenna} → {locationLabel({ name: point.location_name, external_key: point.location_external_key })}
      </span>
      <button
        type="button"
        class="button link"
        aria-label={`Remove ${antenna} of ${reader.name}`}
        onClick={remove}
      >
        Remove
      </button>
      <ErrorAlert error={error} />
    </li>
  );
}

function AddScanPoint({ reader, onAdded }: { reader: Reader; onAdded(): void }) {
  const [antenna, setAntenna] = useState('');
  const [location, setLocation] = useState<LocationOption | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const id = `reader-${reader.id}-sp`;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!location) {
      setError(new Error('Choose the location this antenna covers.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api(`/internal/readers/${reader.id}/scan-points`, {
        method: 'POST',
        body: { antenna: antenna === '' ? null : Number(antenna), location_id: location.id },
      });
      setAntenna('');
      setLocation(null);
      onAdded();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="scan-point-form" onSubmit={submit} aria-label={`Map an antenna of ${reader.name}`}>
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
          value={antenna}
          onInput={(e) => setAntenna(e.currentTarget.value)}
        />
        <p class="hint" id={`${id}-antenna-hint`}>
          Empty: every antenna of the reader.
        </p>
      </div>
      <LocationPicker id={id} label="Location covered" value={location} onChange={setLocation} />
      <ErrorAlert error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Map antenna
      </button>
    </form>
  );
}

function ReaderCard({
  reader,
  onChanged,
  onRotated,
}: {
  reader: Reader;
  onChanged(): void;
  onRotated(shown: ShownSecrets): void;
}) {
  const [mapping, setMapping] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    try {
      await api(`/internal/readers/${reader.id}`, { method: 'DELETE' });
      onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <article class="card reader" aria-labelledby={`reader-${reader.id}-name`}>
      <header class="reader-head">
        <h3 id={`reader-${reader.id}-name`}>{reader.name}</h3>
        <span class="muted">{FAMILIES.find((f) => f.id === reader.family)?.label ?? reader.family}</span>
      </header>
      <dl class="facts">
        <div>
          <dt>Identity</dt>
          <dd class="mono">{reader.identity}</dd>
        </div>
        <div>
          <dt>Topic</dt>
          <dd class="mono">{reader.topic}</dd>
        </div>
        <div>
          <dt>MQTT user</dt>
          <dd>
            <span class="mono">{reader.mqtt_username}</span>
            {reader.mqtt_credentials ? '' : ' (revoked)'}
          </dd>
        </div>
        <div>
          <dt>Last message</dt>
          <dd>{formatDateTime(reader.last_message_at, 'never')}</dd>
        </div>
        <div>
          <dt>Good reads</dt>
          <dd class="num">{reader.good_reads}</dd>
        </div>
        <div>
          <dt>Bad reads</dt>
          <dd class="num">{reader.bad_reads}</dd>
        </div>
        <div>
          <dt>Unknown tags</dt>
          <dd class="num">{reader.unknown_reads}</dd>
        </div>
      </dl>
      {reader.bad_reads + reader.unknown_reads > 0 && (
        <ReaderProblems readerId={reader.id} readerName={reader.name} />
      )}
      <MqttAccess reader={reader} onRotated={onRotated} onChanged={onChanged} />
      <h4>Scan points</h4>
      {reader.scan_points.length === 0 ? (
        <p class="muted">No antenna mapped yet: reads from this reader place nothing.</p>
      ) : (
        <ul class="scan-points">
          {reader.scan_points.map((p) => (
            <ScanPointRow key={p.id} reader={reader} point={p} onChanged={onChanged} />
          ))}
        </ul>
      )}
      <div class="card-actions">
        <button
          type="button"
          class="button secondary"
          aria-expanded={mapping}
          aria-controls={`reader-${reader.id}-map`}
          onClick={() => setMapping(!mapping)}
        >
          {mapping ? 'Close' : 'Map an antenna'}
        </button>
        {confirming ? (
          <span class="confirm">
            Delete “{reader.name}”?{' '}
            <button type="button" class="button danger" onClick={remove}>
              Yes, delete
            </button>{' '}
            <button type="button" class="button secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button
            type="button"
            class="button link"
            aria-label={`Delete reader ${reader.name}`}
            onClick={() => setConfirming(true)}
          >
            Delete reader
          </button>
        )}
      </div>
      <div id={`reader-${reader.id}-map`}>
        {mapping && (
          <AddScanPoint
            reader={reader}
            onAdded={() => {
              setMapping(false);
              onChanged();
            }}
          />
        )}
      </div>
      <ErrorAlert error={error} />
    </article>
  );
}

export function ReadersPage() {
  const readers = usePaged<Reader>('/internal/readers', {}, 10, { urlPage: true });
  const [shown, setShown] = useState<ShownSecrets | null>(null);
  const show = (secrets: ShownSecrets) => {
    setShown(secrets);
    readers.reload();
  };
  return (
    <main id="main">
      <PageHeader title="Readers and scan points" />
      <BrokerAddress />
      <AddReader onAdded={show} />
      {shown && <SecretsShown shown={shown} onDone={() => setShown(null)} />}
      <section aria-labelledby="readers-title">
        <h2 id="readers-title">Readers</h2>
        <ErrorAlert error={readers.error} />
        {!readers.loading && readers.rows.length === 0 && <p class="empty">No readers yet.</p>}
        <div class="reader-list">
          {readers.rows.map((r) => (
            <ReaderCard key={r.id} reader={r} onChanged={readers.reload} onRotated={show} />
          ))}
        </div>
        <Pager paged={readers} label="Readers" />
      </section>
    </main>
  );
}
