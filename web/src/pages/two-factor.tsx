import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Session } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { AppCodeField, TextField } from '../components/text-field.js';
import { useAction } from '../components/use-action.js';
import { useSession } from '../session.js';
import { RecoveryCodesPanel, RegenerateRecoveryCodes } from './two-factor-recovery.js';

interface TotpStatus {
  enabled: boolean;
  enabled_at: string | null;
  required: boolean;
  recovery_codes_left: number;
}

interface Enrolment {
  secret: string;
  otpauth_uri: string;
  /** The URI as a QR code: an SVG `data:` URL. */
  otpauth_qr: string;
}

/**
 * Two-factor sign-in on the account page (docs/web-app.md "Accounts"): start enrolment,
 * confirm it with a code from the app (which answers the recovery codes, shown once), make
 * new recovery codes, or turn it off with the password and a code.
 */
export function TwoFactorCard() {
  const { session, setSession } = useSession();
  const [status, setStatus] = useState<TotpStatus | null>(null);
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  // One action at a time (start, confirm, turn off); a failed load shows in its alert too.
  const { run, busy, error, setError } = useAction((work: () => Promise<void>) => work());
  const [shownCodes, setShownCodes] = useState<string[] | null>(null);
  // Each step replaces the control that was pressed (Set up, Turn off, the codes panel's
  // "I have saved them"), and the focus fell to nothing: a keyboard user started again from
  // the top and a screen reader said nothing of the new state. The id of what takes the
  // focus once the step's outcome has rendered: the enrolment's instructions, or the line
  // saying whether two-factor sign-in is on.
  const focusNext = useRef<string | null>(null);
  useEffect(() => {
    const target = focusNext.current && document.getElementById(focusNext.current);
    if (!target) return;
    focusNext.current = null;
    target.focus();
  });

  useEffect(() => {
    api<{ data: TotpStatus }>('/internal/account/totp')
      .then((res) => setStatus(res.data))
      .catch(setError);
  }, []);

  const start = () =>
    run(async () => {
      const res = await api<{ data: Enrolment }>('/internal/account/totp/enrolment', { method: 'POST' });
      setEnrolment(res.data);
      focusNext.current = 'totp-enrol-intro';
    });

  const confirm = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const res = await api<{ data: TotpStatus & { recovery_codes: string[] } }>(
        '/internal/account/totp/confirm',
        { method: 'POST', body: { code } },
      );
      const { recovery_codes, ...next } = res.data;
      setStatus(next);
      setShownCodes(recovery_codes);
      setEnrolment(null);
      setCode('');
      // The session may have been limited to enrolment: it is not any more.
      if (session.totp_enrolment_required) {
        setSession((await api<{ data: Session }>('/internal/session')).data);
      }
    });
  };

  const disable = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api('/internal/account/totp/disable', {
        method: 'POST',
        body: { current_password: password, code },
      });
      setStatus((await api<{ data: TotpStatus }>('/internal/account/totp')).data);
      setPassword('');
      setCode('');
      focusNext.current = 'totp-state';
    });
  };

  const codeField = <AppCodeField id="totp-code" label="Code from the app" value={code} onValue={setCode} />;

  return (
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor sign-in</h2>
      {session.totp_enrolment_required && (
        <p class="alert alert-warning" role="status">
          {session.organization.name} requires two-factor sign-in: set it up to go on using tagtrail.
        </p>
      )}
      {status === null ? (
        <ErrorAlert error={error} />
      ) : status.enabled && shownCodes ? (
        <RecoveryCodesPanel
          codes={shownCodes}
          onDone={() => {
            setShownCodes(null);
            focusNext.current = 'totp-state';
            api<{ data: TotpStatus }>('/internal/account/totp')
              .then((res) => setStatus(res.data))
              .catch(setError);
          }}
        />
      ) : status.enabled ? (
        <>
          <form onSubmit={disable}>
            <p id="totp-state" tabIndex={-1}>
              On: signing in needs a code from your authenticator app.
              {status.required && ' Your organization requires it, so it cannot be turned off.'}
            </p>
            {!status.required && (
              <>
                <TextField
                  id="totp-password"
                  label="Current password"
                  type="password"
                  autocomplete="current-password"
                  required
                  value={password}
                  onValue={setPassword}
                />
                {codeField}
                <ErrorAlert error={error} />
                <button type="submit" class="button" disabled={busy}>
                  Turn off two-factor sign-in
                </button>
              </>
            )}
          </form>
          <RegenerateRecoveryCodes left={status.recovery_codes_left} onCodes={setShownCodes} />
        </>
      ) : enrolment ? (
        <form onSubmit={confirm}>
          <p id="totp-enrol-intro" tabIndex={-1}>
            Add this account to an authenticator app: scan the QR code, paste the link into it, or type the
            secret. Then enter the code it shows.
          </p>
          <img
            class="totp-qr"
            src={enrolment.otpauth_qr}
            width={200}
            height={200}
            alt="QR code of the otpauth link below, for an authenticator app to scan"
          />
          <div class="field">
            <label for="totp-secret">Secret</label>
            <input
              id="totp-secret"
              readOnly
              value={enrolment.secret}
              onFocus={(e) => e.currentTarget.select()}
            />
          </div>
          <div class="field">
            <label for="totp-uri">Link (otpauth)</label>
            <input
              id="totp-uri"
              readOnly
              value={enrolment.otpauth_uri}
              onFocus={(e) => e.currentTarget.select()}
            />
          </div>
          {codeField}
          <ErrorAlert error={error} />
          <button type="submit" class="button primary" disabled={busy}>
            Turn on
          </button>
        </form>
      ) : (
        <>
          <p id="totp-state" tabIndex={-1}>
            Off: your password alone signs you in. With it on, signing in also needs a code from an app.
          </p>
          <ErrorAlert error={error} />
          <button type="button" class="button primary" disabled={busy} onClick={start}>
            Set up two-factor sign-in
          </button>
        </>
      )}
    </section>
  );
}

/** The administrators' switch on the Members page: require two-factor sign-in of everybody. */
export function TwoFactorRequirement() {
  const { setSession } = useSession();
  const [required, setRequired] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    api<{ data: { required: boolean } }>('/internal/members/two-factor')
      .then((res) => setRequired(res.data.required))
      .catch(setError);
  }, []);

  // The box shows the choice at once and stays disabled until the server answers: a
  // controlled checkbox that waited for the answer would flip back on any re-render before it.
  const change = async (next: boolean) => {
    const before = required;
    setError(null);
    setRequired(next);
    setSaving(true);
    try {
      const res = await api<{ data: { required: boolean } }>('/internal/members/two-factor', {
        method: 'POST',
        body: { required: next },
      });
      setRequired(res.data.required);
      // An admin without two-factor sign-in who requires it is now limited to enrolment too.
      if (res.data.required) setSession((await api<{ data: Session }>('/internal/session')).data);
    } catch (e) {
      setRequired(before);
      setError(e);
    } finally {
      setSaving(false);
    }
  };

  return (
    <section class="card" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      <label class="checkbox">
        <input
          type="checkbox"
          checked={required === true}
          disabled={required === null || saving}
          aria-busy={saving}
          onChange={(e) => change(e.currentTarget.checked)}
        />
        Require it of every member (those without it are sent to set it up after signing in)
      </label>
      <ErrorAlert error={error} />
    </section>
  );
}
