import { useState } from 'preact/hooks';
import { api, type Reader } from '../api.js';
import { FormAlert, useFormErrors } from './form-errors.js';
import type { ShownSecrets } from './reader-credentials.js';
import { ReaderTopicField, TextField } from './text-field.js';
import { submitting, useAction } from './use-action.js';

export const FAMILIES: { id: string; label: string }[] = [
  { id: 'impinj-r700', label: 'Impinj R700' },
  { id: 'zebra-fx', label: 'Zebra FX' },
  { id: 'csl-cs463', label: 'CSL CS463' },
  { id: 'generic-json', label: 'Generic JSON' },
];

/**
 * The fields the reader forms show the API's messages under (a topic with `+` or `#`, a
 * blank name): in an alert above the button they left the person to find the field.
 */
export const READER_FIELDS = new Set(['name', 'identity', 'topic']);

export const familyLabel = (id: string) => FAMILIES.find((f) => f.id === id)?.label ?? id;

/** The reader family choice (which message format the reader speaks), on the add and edit forms. */
export function FamilyField({
  id,
  value,
  onValue,
}: {
  id: string;
  value: string;
  onValue(id: string): void;
}) {
  return (
    <div class="field">
      <label for={id}>Family</label>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
        {FAMILIES.map((f) => (
          <option key={f.id} value={f.id}>
            {f.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Edit a reader's name, family, identity, topic and webhook (PATCH /internal/readers/{id},
 * the create's rules and messages). Only the changed fields are sent, so an edit does not
 * overwrite what someone else changed meanwhile in another field.
 */
export function EditReader({
  reader,
  onSaved,
  onCancel,
}: {
  reader: Reader;
  onSaved(shown: ShownSecrets | null): void;
  onCancel(): void;
}) {
  const [name, setName] = useState(reader.name);
  const [family, setFamily] = useState(reader.family);
  const [identity, setIdentity] = useState(reader.identity);
  const [topic, setTopic] = useState(reader.topic);
  const [webhook, setWebhook] = useState(reader.webhook);
  const id = `reader-${reader.id}-edit`;

  const { run, busy, error } = useAction(async () => {
    const body: Record<string, unknown> = {};
    if (name !== reader.name) body.name = name;
    if (family !== reader.family) body.family = family;
    if (identity !== reader.identity) body.identity = identity;
    if (topic !== reader.topic) body.topic = topic;
    if (webhook !== reader.webhook) body.webhook = webhook;
    const res = await api<{ data: Reader; webhook_secret?: string }>(`/internal/readers/${reader.id}`, {
      method: 'PATCH',
      body,
    });
    onSaved(
      res.webhook_secret ? { reader: res.data, mqttPassword: null, webhookSecret: res.webhook_secret } : null,
    );
  });
  const errors = useFormErrors(error, (field) => READER_FIELDS.has(field));

  return (
    <form
      class="reader-edit"
      onSubmit={submitting(run)}
      aria-label={`Edit reader ${reader.name}`}
      {...errors.listeners}
    >
      <div class="row">
        <TextField
          id={`${id}-name`}
          label="Name"
          required
          value={name}
          onValue={setName}
          errors={errors}
          field="name"
        />
        <FamilyField id={`${id}-family`} value={family} onValue={setFamily} />
      </div>
      <div class="row">
        <TextField
          id={`${id}-identity`}
          label="Identity"
          required
          value={identity}
          onValue={setIdentity}
          errors={errors}
          field="identity"
        />
        <ReaderTopicField
          id={`${id}-topic`}
          label="MQTT topic"
          value={topic}
          onValue={setTopic}
          errors={errors}
          field="topic"
        />
      </div>
      <label class="checkbox">
        <input type="checkbox" checked={webhook} onChange={(e) => setWebhook(e.currentTarget.checked)} />
        {reader.webhook
          ? 'Accept reads over the HTTP webhook (unticking withdraws its secret)'
          : 'Also accept reads over the HTTP webhook (issues a secret, shown once)'}
      </label>
      <FormAlert errors={errors} />
      <div class="card-actions">
        <button type="submit" class="button primary" disabled={busy}>
          Save reader
        </button>
        <button type="button" class="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
