import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmedAction } from '../components/confirm.js';
import { ErrorAlert } from '../components/errors.js';
import { AppCodeField } from '../components/text-field.js';
import { submitting, useAction } from '../components/use-action.js';

/**
 * The recovery codes just made, shown once (only their hashes are kept): each signs in
 * once in place of a code from the app. The panel takes focus so a screen reader reads it.
 */
export function RecoveryCodesPanel({ codes, onDone }: { codes: string[]; onDone(): void }) {
  const panel = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  useEffect(() => panel.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(codes.join('\n'));
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section class="minted" ref={panel} tabIndex={-1} aria-labelledby="recovery-title">
      <h3 id="recovery-title">Your recovery codes</h3>
      <p>
        Keep these somewhere safe, away from your phone: each signs you in <strong>once</strong> in place of a
        code from the app. They are shown <strong>only now</strong>.
      </p>
      <ol class="recovery-codes mono" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ol>
      <p class="hint" role="status">
        {copied === 'yes' && 'Copied to the clipboard.'}
        {copied === 'failed' && 'Copying is blocked here; select the codes and copy them yourself.'}
      </p>
      <button type="button" class="button secondary" onClick={copy}>
        Copy the codes
      </button>{' '}
      <button type="button" class="button primary" onClick={onDone}>
        I have saved them
      </button>
    </section>
  );
}

/** Ten new recovery codes for a current code from the app; the old ones stop working. */
export function RegenerateRecoveryCodes({ left, onCodes }: { left: number; onCodes(codes: string[]): void }) {
  const [code, setCode] = useState('');
  const { run, busy, error } = useAction(async () => {
    const res = await api<{ data: { recovery_codes: string[] } }>('/internal/account/totp/recovery-codes', {
      method: 'POST',
      body: { code },
    });
    setCode('');
    onCodes(res.data.recovery_codes);
  });
  return (
    <form onSubmit={submitting(run)} aria-labelledby="recovery-left">
      <p id="recovery-left">
        <strong>{left}</strong> of 10 recovery codes left.
        {left <= 3 && ' Make new ones before they run out.'}
      </p>
      <AppCodeField
        id="totp-regenerate-code"
        label="App code for new recovery codes"
        value={code}
        onValue={setCode}
      />
      <ErrorAlert error={error} />
      <button type="submit" class="button secondary" disabled={busy}>
        Make new recovery codes
      </button>
    </form>
  );
}

/**
 * An admin's reset of a member's two-factor sign-in (lost phone and codes), after a
 * confirmation: it is off and the member's sessions end.
 */
export function TwoFactorReset({ userId, email, onDone }: { userId: number; email: string; onDone(): void }) {
  const [confirming, setConfirming] = useState(false);
  const reset = useAction(async () => {
    await api(`/internal/members/${userId}/two-factor`, { method: 'DELETE' });
    setConfirming(false);
    onDone();
  });
  return (
    <>
      <ConfirmedAction
        label="Reset two-factor"
        ariaLabel={`Reset two-factor sign-in of ${email}`}
        asking={confirming}
        onAsking={setConfirming}
        question={`Reset two-factor sign-in of ${email}? Their sessions end now; they sign in with the password and set it up again where it is required.`}
        yes="Yes, reset"
        busy={reset.busy}
        onYes={reset.run}
      />
      <ErrorAlert error={reset.error} />
    </>
  );
}
