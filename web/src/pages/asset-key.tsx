import { useEffect, useState } from 'preact/hooks';
import { type Asset, type AssetDetail, api } from '../api.js';
import { ConfirmedAction } from '../components/confirm.js';
import { ErrorAlert } from '../components/errors.js';
import { FieldMessage, FormAlert, useFormErrors } from '../components/form-errors.js';
import { submitting, useAction } from '../components/use-action.js';
import { navigate } from '../router.js';

/** The asset page's rename of the external key, and the asset's deletion. */
export function KeyAndDelete({ asset, onRenamed }: { asset: AssetDetail; onRenamed(asset: Asset): void }) {
  const [key, setKey] = useState(asset.external_key);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  // The key changed (here, or elsewhere and reloaded): the field shows it. The card was
  // remounted for that, which dropped the focus to the page body after a rename: the
  // field takes it now (Rename is disabled once the key is the asset's), and a status says
  // what happened.
  useEffect(() => setKey(asset.external_key), [asset.external_key]);
  const rename = useAction(async () => {
    const res = await api<{ data: Asset }>(`/internal/assets/${asset.id}/rename`, {
      method: 'POST',
      body: { external_key: key },
    });
    document.getElementById('rename-key')?.focus();
    setDone(`Key changed to ${res.data.external_key}.`);
    onRenamed(res.data);
  });
  // Its error is shown under the question, apart from the rename's.
  const remove = useAction(
    async () => {
      await api(`/internal/assets/${asset.id}`, { method: 'DELETE' });
      navigate('/assets', { state: { deleted: asset.name } });
    },
    { busyAfterSuccess: true },
  );
  const busy = rename.busy || remove.busy;
  const errors = useFormErrors(rename.error, (f) => f === 'external_key');

  return (
    <section class="card" aria-labelledby="key-title">
      <h2 id="key-title">Key and removal</h2>
      <form onSubmit={submitting(rename.run)} noValidate class="row compact" {...errors.listeners}>
        <div class="field">
          <label for="rename-key">External key</label>
          <input
            id="rename-key"
            class="mono"
            autocapitalize="off"
            value={key}
            onInput={(e) => {
              setKey(e.currentTarget.value);
              setDone(null);
            }}
            {...errors.input('external_key', 'rename-key', 'rename-key-hint')}
          />
          <p class="hint" id="rename-key-hint">
            Integrations that use the old key must switch to the new one.
          </p>
          <FieldMessage errors={errors} field="external_key" id="rename-key" />
        </div>
        <div class="field field-button">
          <button type="submit" class="button secondary" disabled={busy || key === asset.external_key}>
            Rename
          </button>
        </div>
      </form>
      <FormAlert errors={errors} />
      {done && (
        <p class="alert alert-success" role="status">
          {done}
        </p>
      )}
      <ConfirmedAction
        label="Delete asset"
        danger
        asking={confirming}
        onAsking={setConfirming}
        question={`Delete “${asset.name}”? Its tags are released and its key can be used again; it cannot be restored.`}
        yes="Yes, delete"
        busy={busy}
        onYes={remove.run}
      />
      <ErrorAlert error={remove.error} />
    </section>
  );
}
