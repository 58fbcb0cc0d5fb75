import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type Session, type SignUpState } from '../api.js';
import { ErrorAlert, MessagesAlert } from '../components/errors.js';
import { useFormErrors } from '../components/form-errors.js';
import { PageHeader } from '../components/page.js';
import { AppCodeField, NewPasswordField, TextField } from '../components/text-field.js';
import { submitting, useAction } from '../components/use-action.js';
import { Link, navigate } from '../router.js';

/** Where to go after signing in: the page that asked for it, or the location tree. */
function next(): string {
  const wanted = new URLSearchParams(window.location.search).get('next');
  return wanted?.startsWith('/') && !wanted.startsWith('//') ? wanted : '/locations';
}

/**
 * Sign-in and sign-up alike: post the credentials, keep the session and move on, or show
 * why not (a 401 here is an answer, not a lost session).
 */
function useCredentialsForm(path: string, onSession: (session: Session) => void, destination: () => string) {
  const { error, busy, run } = useAction(
    async (body: Record<string, unknown>) => {
      const res = await api<{ data: Session }>(path, { method: 'POST', body, expectUnauthorized: true });
      onSession(res.data);
      navigate(destination(), { replace: true });
    },
    { busyAfterSuccess: true },
  );
  const submit = (body: Record<string, unknown>) => submitting(() => run(body));
  return { error, busy, submit };
}

export function SignIn({ onSession }: { onSession(session: Session): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [signUpOpen, setSignUpOpen] = useState(true);
  // An account with two-factor sign-in answers 400 on `totp_code` to the password alone:
  // from then on the form asks for the code too.
  const [askCode, setAskCode] = useState(false);
  // A lost phone: one of the recovery codes shown at enrolment, in place of the app's code.
  const [useRecovery, setUseRecovery] = useState(false);
  const [recoveryCode, setRecoveryCode] = useState('');
  // Signed in with a recovery code: on to the two-factor card, which counts the codes left
  // and makes new ones (or sets up the new phone after turning it off).
  const { error, busy, submit } = useCredentialsForm(
    '/internal/auth/sign-in',
    onSession,
    askCode && useRecovery ? () => '/password' : next,
  );
  // That answer is the form's next step, not a mistake: it showed as an error ("totp_code is
  // required: …", the API's field name), and the focus stayed on the disabled button, so a
  // keyboard or screen-reader user was not taken to the field that had appeared.
  const codeAsked = error instanceof ApiError && error.fields.some((f) => f.field === 'totp_code');
  useEffect(() => {
    if (codeAsked) setAskCode(true);
  }, [codeAsked]);
  useEffect(() => {
    if (askCode) document.getElementById(useRecovery ? 'sign-in-recovery' : 'sign-in-code')?.focus();
  }, [askCode, useRecovery]);

  // A fresh install has nobody to sign in as: open on sign-up for the first administrator.
  useEffect(() => {
    api<{ data: SignUpState }>('/internal/auth/sign-up-state', { expectUnauthorized: true })
      .then((res) => {
        // The ?next the sign-in page was given goes along, so the first administrator still
        // lands on the page they opened (it was dropped, and sign-up went to /locations).
        if (!res.data.has_users && res.data.sign_up_open)
          navigate(`/sign-up${window.location.search}`, { replace: true });
        else setSignUpOpen(res.data.sign_up_open);
      })
      .catch(() => {
        // Only a hint: the sign-in form works without it.
      });
  }, []);

  return (
    <main class="auth-card" id="main">
      <p class="auth-brand">tagtrail</p>
      <PageHeader title="Sign in" />
      <form
        onSubmit={submit(
          !askCode
            ? { email, password }
            : useRecovery
              ? { email, password, recovery_code: recoveryCode }
              : { email, password, totp_code: code },
        )}
        aria-describedby={error && !codeAsked ? 'sign-in-error' : undefined}
      >
        <TextField
          id="sign-in-email"
          label="Email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onValue={setEmail}
        />
        <TextField
          id="sign-in-password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        {askCode && useRecovery && (
          <div class="field">
            <label for="sign-in-recovery">Recovery code</label>
            <input
              id="sign-in-recovery"
              class="mono"
              autocomplete="off"
              spellcheck={false}
              required
              value={recoveryCode}
              onInput={(e) => setRecoveryCode(e.currentTarget.value.trim())}
            />
            <p class="hint">Each recovery code works once.</p>
          </div>
        )}
        {askCode && !useRecovery && (
          <AppCodeField
            id="sign-in-code"
            label="Code from your authenticator app"
            hint="This account signs in with two-factor sign-in: enter the 6-digit code the app shows now."
            value={code}
            onValue={setCode}
          />
        )}
        {askCode && (
          <p>
            <button type="button" class="button link" onClick={() => setUseRecovery(!useRecovery)}>
              {useRecovery ? 'Use a code from the app instead' : 'Lost your phone? Use a recovery code'}
            </button>
          </p>
        )}
        <ErrorAlert error={codeAsked ? null : error} id="sign-in-error" />
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {signUpOpen && (
        <p class="aside">
          New here? <Link href={`/sign-up${window.location.search}`}>Create an organization</Link>
        </p>
      )}
    </main>
  );
}

const SIGN_UP_FIELDS = new Set(['organization_name', 'email', 'password']);

export function SignUp({ onSession }: { onSession(session: Session): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organization, setOrganization] = useState('');
  const { error, busy, submit } = useCredentialsForm('/internal/auth/sign-up', onSession, next);
  // The API's message for a field under that field, as on the other forms: a blank
  // organization name showed only in an alert under the password, naming the API's field
  // ("organization_name must not be blank"), and no input was marked.
  const errors = useFormErrors(error, (field) => SIGN_UP_FIELDS.has(field));
  const rest = errors.rest();

  return (
    <main class="auth-card" id="main">
      <p class="auth-brand">tagtrail</p>
      <PageHeader title="Create your organization" />
      <form
        onSubmit={submit({ email, password, organization_name: organization })}
        aria-describedby={rest.length > 0 ? 'sign-up-error' : undefined}
        {...errors.listeners}
      >
        <TextField
          id="sign-up-organization"
          label="Organization name"
          type="text"
          autocomplete="organization"
          required
          value={organization}
          onValue={setOrganization}
          errors={errors}
          field="organization_name"
        />
        <TextField
          id="sign-up-email"
          label="Email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onValue={setEmail}
          errors={errors}
          field="email"
        />
        <NewPasswordField
          id="sign-up-password"
          label="Password"
          value={password}
          onValue={setPassword}
          errors={errors}
          field="password"
        />
        {rest.length > 0 && <MessagesAlert messages={rest} id="sign-up-error" />}
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </form>
      <p class="aside">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </main>
  );
}
