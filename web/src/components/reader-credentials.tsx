import { useState } from 'preact/hooks';
import { api, type Reader } from '../api.js';
import { useQuestionFocus } from './confirm.js';
import { CopyField } from './copy-field.js';
import { ErrorAlert } from './errors.js';
import { ShownOncePanel } from './shown-once.js';
import { useAction } from './use-action.js';

/**
 * Secrets shown once: after a reader is added, after its MQTT password is replaced, or
 * after an edit turned its webhook on (then there is no new MQTT password).
 */
export interface ShownSecrets {
  reader: Reader;
  mqttPassword: string | null;
  webhookSecret: string | null;
}

/**
 * Where a webhook reader posts its messages (src/ingest/routes/webhook.ts, WEBHOOK_PATH).
 * The secret alone does not set a reader up: it also needs this address, whose reader id
 * the page shows nowhere else.
 */
export function webhookUrl(readerId: number): string {
  return `${window.location.origin}/ingest/v1/readers/${readerId}/messages`;
}

/** Replace (rotate) or revoke the reader's MQTT password; either closes its live connection. */
export function MqttAccess({
  reader,
  onRotated,
  onChanged,
}: {
  reader: Reader;
  onRotated(shown: ShownSecrets): void;
  onChanged(): void;
}) {
  const [confirming, setConfirming] = useState<'rotate' | 'revoke' | null>(null);
  // A second "Yes" while the first runs would replace the password again, so the one shown
  // would not be the one in force, or show the second revoke's refusal.
  const { run, busy, error } = useAction((request: () => Promise<void>) => request());
  const rotate = () =>
    run(async () => {
      const res = await api<{ data: Reader; mqtt_password: string }>(
        `/internal/readers/${reader.id}/mqtt-credentials`,
        { method: 'POST' },
      );
      setConfirming(null);
      onRotated({ reader: res.data, mqttPassword: res.mqtt_password, webhookSecret: null });
    });
  const revoke = () =>
    run(async () => {
      await api(`/internal/readers/${reader.id}/mqtt-credentials`, { method: 'DELETE' });
      setConfirming(null);
      onChanged();
    });
  const newLabel = reader.mqtt_credentials ? 'New MQTT password' : 'Issue MQTT password';
  const rotateFocus = useQuestionFocus(confirming === 'rotate');
  const revokeFocus = useQuestionFocus(confirming === 'revoke');
  return (
    <div class="card-actions">
      {confirming === null && (
        <>
          <button
            type="button"
            ref={rotateFocus.ask}
            class="button secondary"
            aria-label={`${newLabel} for ${reader.name}`}
            onClick={() => setConfirming('rotate')}
          >
            {newLabel}
          </button>
          {reader.mqtt_credentials && (
            <button
              type="button"
              ref={revokeFocus.ask}
              class="button link"
              aria-label={`Revoke MQTT access of ${reader.name}`}
              onClick={() => setConfirming('revoke')}
            >
              Revoke MQTT access
            </button>
          )}
        </>
      )}
      {confirming === 'rotate' && (
        // biome-ignore lint/a11y/useSemanticElements: as in ConfirmedAction, the question names the group the focus lands in
        <span class="confirm" role="group" aria-labelledby={`reader-${reader.id}-rotate-question`}>
          <span id={`reader-${reader.id}-rotate-question`}>
            {reader.mqtt_credentials
              ? `Replace the MQTT password of “${reader.name}”? It is disconnected until configured with the new one.`
              : `Issue an MQTT password for “${reader.name}”?`}
          </span>{' '}
          <button type="button" class="button primary" disabled={busy} onClick={rotate}>
            Yes, {reader.mqtt_credentials ? 'replace' : 'issue'}
          </button>{' '}
          <button
            type="button"
            ref={rotateFocus.cancel}
            class="button secondary"
            onClick={() => setConfirming(null)}
          >
            Cancel
          </button>
        </span>
      )}
      {confirming === 'revoke' && (
        // biome-ignore lint/a11y/useSemanticElements: as in ConfirmedAction, the question names the group the focus lands in
        <span class="confirm" role="group" aria-labelledby={`reader-${reader.id}-revoke-question`}>
          <span id={`reader-${reader.id}-revoke-question`}>
            Revoke the MQTT access of “{reader.name}”? It is disconnected at once.
          </span>{' '}
          <button type="button" class="button danger" disabled={busy} onClick={revoke}>
            Yes, revoke
          </button>{' '}
          <button
            type="button"
            ref={revokeFocus.cancel}
            class="button secondary"
            onClick={() => setConfirming(null)}
          >
            Cancel
          </button>
        </span>
      )}
      <ErrorAlert error={error} />
    </div>
  );
}

/**
 * The credentials to configure the reader with, shown once: in the panel the other secrets
 * shown once use (an API key, an invitation link), which takes the focus, so a screen reader
 * announces it and the page scrolls to it (it opens above the readers, far from a "New MQTT
 * password" pressed on a reader further down, and the focus was left on nothing), with a
 * Copy button beside each value.
 */
export function SecretsShown({ shown, onDone }: { shown: ShownSecrets; onDone(): void }) {
  return (
    <ShownOncePanel
      titleId="secret-title"
      title={`Credentials for “${shown.reader.name}”`}
      doneLabel="Done"
      onDone={onDone}
    >
      <p>Configure the reader with them now; they are shown only once.</p>
      {shown.mqttPassword !== null && (
        <>
          <CopyField
            id="mqtt-username"
            label="MQTT user name (also the client id, or its start)"
            value={shown.reader.mqtt_username}
          />
          <CopyField id="mqtt-password" label="MQTT password" value={shown.mqttPassword} />
        </>
      )}
      {shown.webhookSecret && (
        <>
          <CopyField
            id="webhook-url"
            label="Webhook URL (POST, with the header Authorization: Bearer and the secret)"
            value={webhookUrl(shown.reader.id)}
          />
          <CopyField id="webhook-secret" label="Webhook secret" value={shown.webhookSecret} />
        </>
      )}
    </ShownOncePanel>
  );
}
