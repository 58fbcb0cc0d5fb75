import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Reader } from '../api.js';
import { BrokerAddress } from '../components/broker-address.js';
import { useQuestionFocus } from '../components/confirm.js';
import { ErrorAlert } from '../components/errors.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { useKeptInput } from '../components/kept-input.js';
import { ListSection } from '../components/list-layout.js';
import { PageHeader } from '../components/page.js';
import { isEmpty, usePaged } from '../components/paging.js';
import { MqttAccess, SecretsShown, type ShownSecrets, webhookUrl } from '../components/reader-credentials.js';
import { EditReader, FamilyField, familyLabel, READER_FIELDS } from '../components/reader-edit.js';
import { ReaderHealth } from '../components/reader-health.js';
import { ReaderProblems } from '../components/reader-problems.js';
import { AddScanPoint, ScanPointRow } from '../components/scan-points.js';
import { ReaderTopicField, TextField } from '../components/text-field.js';
import { submitting, useAction } from '../components/use-action.js';
import { formatDateTime } from '../format.js';
import { useCan } from '../session.js';

/** How often the readers page reloads, for its health figures. */
const HEALTH_REFRESH_MS = 15_000;

function AddReader({ onAdded }: { onAdded(shown: ShownSecrets): void }) {
  const [name, setName, clearName] = useKeptInput('reader.name', '');
  const [family, setFamily] = useState('impinj-r700');
  const [identity, setIdentity, clearIdentity] = useKeptInput('reader.identity', '');
  const [topic, setTopic, clearTopic] = useKeptInput('reader.topic', '');
  const [webhook, setWebhook] = useState(false);

  const { run, busy, error } = useAction(async () => {
    const res = await api<{ data: Reader; webhook_secret?: string; mqtt_password: string }>(
      '/internal/readers',
      {
        method: 'POST',
        body: { name, family, identity, topic, webhook },
      },
    );
    clearName();
    clearIdentity();
    clearTopic();
    setWebhook(false);
    onAdded({
      reader: res.data,
      mqttPassword: res.mqtt_password,
      webhookSecret: res.webhook_secret ?? null,
    });
  });
  const errors = useFormErrors(error, (field) => READER_FIELDS.has(field));

  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby="add-reader-title" {...errors.listeners}>
      <h2 id="add-reader-title">Add a reader</h2>
      <div class="row">
        <TextField
          id="reader-name"
          label="Name"
          required
          value={name}
          onValue={setName}
          errors={errors}
          field="name"
        />
        <FamilyField id="reader-family" value={family} onValue={setFamily} />
      </div>
      <div class="row">
        <div class="field">
          <label for="reader-identity">Identity</label>
          <input
            id="reader-identity"
            required
            value={identity}
            {...errors.input('identity', 'reader-identity', 'reader-identity-hint')}
            onInput={(e) => setIdentity(e.currentTarget.value)}
          />
          <p class="hint" id="reader-identity-hint">
            The reader's own name or serial, as it appears in its messages.
          </p>
          <FieldMessage errors={errors} field="identity" id="reader-identity" />
        </div>
        <ReaderTopicField
          id="reader-topic"
          label="MQTT topic"
          placeholder="site/dock-1/reads"
          value={topic}
          onValue={setTopic}
          errors={errors}
          field="topic"
        />
      </div>
      <label class="checkbox">
        <input type="checkbox" checked={webhook} onChange={(e) => setWebhook(e.currentTarget.checked)} />
        Also accept reads over the HTTP webhook (issues a secret, shown once)
      </label>
      <FormAlert errors={errors} />
      <button type="submit" class="button primary" disabled={busy}>
        Add reader
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
  const mapToggle = useRef<HTMLButtonElement>(null);
  const [editing, setEditing] = useState(false);
  const editToggle = useRef<HTMLButtonElement>(null);
  // The form goes away with the focus in it (Save reader, Cancel): back to the Edit that
  // opened it, as scan points do, instead of the page body.
  const closeEdit = () => {
    setEditing(false);
    editToggle.current?.focus();
  };
  const [confirming, setConfirming] = useState(false);
  const deleteFocus = useQuestionFocus(confirming);
  // Readers and their credentials are administered; others see them and their counters.
  const admin = useCan()('admin');
  const {
    run: remove,
    busy,
    error,
  } = useAction(async () => {
    await api(`/internal/readers/${reader.id}`, { method: 'DELETE' });
    onChanged();
  });
  return (
    <article class="card reader" aria-labelledby={`reader-${reader.id}-name`}>
      <header class="reader-head">
        <h3 id={`reader-${reader.id}-name`}>{reader.name}</h3>
        <span class="muted">{familyLabel(reader.family)}</span>
        {admin && (
          <button
            type="button"
            class="button link"
            aria-label={`Edit reader ${reader.name}`}
            ref={editToggle}
            aria-expanded={editing}
            onClick={() => setEditing(!editing)}
          >
            Edit
          </button>
        )}
      </header>
      {editing && (
        <EditReader
          reader={reader}
          onSaved={(shown) => {
            closeEdit();
            if (shown) onRotated(shown);
            else onChanged();
          }}
          onCancel={closeEdit}
        />
      )}
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
        {reader.webhook && (
          <div>
            <dt>Webhook URL</dt>
            <dd class="mono">{webhookUrl(reader.id)}</dd>
          </div>
        )}
        <ReaderHealth reader={reader} />
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
      {admin && <MqttAccess reader={reader} onRotated={onRotated} onChanged={onChanged} />}
      <h4 id={`reader-${reader.id}-scan-points`} tabIndex={-1}>
        Scan points
      </h4>
      {reader.scan_points.length === 0 ? (
        <p class="muted">No antenna mapped yet: reads from this reader place nothing.</p>
      ) : (
        <ul class="scan-points">
          {reader.scan_points.map((p) => (
            <ScanPointRow key={p.id} reader={reader} point={p} onChanged={onChanged} />
          ))}
        </ul>
      )}
      {admin && (
        <div class="card-actions">
          <button
            type="button"
            ref={mapToggle}
            class="button secondary"
            aria-expanded={mapping}
            aria-controls={`reader-${reader.id}-map`}
            onClick={() => setMapping(!mapping)}
          >
            {mapping ? 'Close' : 'Map an antenna'}
          </button>
          {confirming ? (
            // biome-ignore lint/a11y/useSemanticElements: as in ConfirmedAction, the question names the group the focus lands in
            <span class="confirm" role="group" aria-labelledby={`reader-${reader.id}-delete-question`}>
              <span id={`reader-${reader.id}-delete-question`}>Delete “{reader.name}”?</span>{' '}
              <button type="button" class="button danger" disabled={busy} onClick={remove}>
                Yes, delete
              </button>{' '}
              <button
                type="button"
                ref={deleteFocus.cancel}
                class="button secondary"
                onClick={() => setConfirming(false)}
              >
                Cancel
              </button>
            </span>
          ) : (
            <button
              type="button"
              ref={deleteFocus.ask}
              class="button link"
              aria-label={`Delete reader ${reader.name}`}
              onClick={() => setConfirming(true)}
            >
              Delete reader
            </button>
          )}
        </div>
      )}
      <div id={`reader-${reader.id}-map`}>
        {mapping && (
          <AddScanPoint
            reader={reader}
            onAdded={() => {
              setMapping(false);
              // The form goes away with the focus in its button: back to the toggle that opened it.
              mapToggle.current?.focus();
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
  const can = useCan();
  const readers = usePaged<Reader>('/internal/readers', {}, 10, { urlPage: true });
  const [shown, setShown] = useState<ShownSecrets | null>(null);
  // Health moves by the minute: refresh while the page is in view (not in a background tab).
  const { reload } = readers;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, HEALTH_REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const show = (secrets: ShownSecrets) => {
    setShown(secrets);
    readers.reload();
  };
  return (
    <main id="main">
      <PageHeader title="Readers and scan points" />
      <BrokerAddress />
      {can('admin') && <AddReader onAdded={show} />}
      {shown && <SecretsShown shown={shown} onDone={() => setShown(null)} />}
      <ListSection id="readers" title="Readers" list={readers} pagerLabel="Readers">
        {isEmpty(readers) && <p class="empty">No readers yet.</p>}
        <div class="reader-list">
          {readers.rows.map((r) => (
            <ReaderCard key={r.id} reader={r} onChanged={readers.reload} onRotated={show} />
          ))}
        </div>
      </ListSection>
    </main>
  );
}
