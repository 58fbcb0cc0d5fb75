import { useState } from 'preact/hooks';
import { api, type Session } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { TextField } from '../components/text-field.js';
import { useAction } from '../components/use-action.js';
import { useSession } from '../session.js';
import { TwoFactorCard } from './two-factor.js';

export function PasswordPage() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState(false);

  const change = useAction(async () => {
    await api('/internal/auth/password', {
      method: 'POST',
      body: { current_password: current, new_password: next },
      expectUnauthorized: true,
    });
    setCurrent('');
    setNext('');
    setRepeat('');
    setDone(true);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    setDone(false);
    if (next !== repeat) change.setError(new Error('The two new passwords differ.'));
    else void change.run();
  };

  return (
    <main id="main" class="narrow">
      <PageHeader title="Change password" />
      <form onSubmit={submit} class="card" aria-label="Change password">
        <TextField
          id="password-current"
          label="Current password"
          type="password"
          autocomplete="current-password"
          required
          value={current}
          onValue={setCurrent}
        />
        <TextField
          id="password-new"
          label="New password"
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          value={next}
          onValue={setNext}
        />
        <TextField
          id="password-repeat"
          label="New password again"
          type="password"
          autocomplete="new-password"
          required
          value={repeat}
          onValue={setRepeat}
        />
        <ErrorAlert error={change.error} />
        {done && (
          <p class="alert alert-success" role="status">
            Password changed. Your other sessions have been signed out.
          </p>
        )}
        <button type="submit" class="button primary" disabled={change.busy}>
          Change password
        </button>
      </form>
      <EmailForm />
      <TwoFactorCard />
    </main>
  );
}

/** The address the person signs in with, changed with their current password. */
export function EmailForm() {
  const { session, setSession } = useSession();
  const [email, setEmail] = useState('');
  const [current, setCurrent] = useState('');
  const [done, setDone] = useState(false);

  const change = useAction(async () => {
    const res = await api<{ data: Session }>('/internal/auth/email', {
      method: 'POST',
      body: { current_password: current, new_email: email },
    });
    setSession(res.data);
    setEmail('');
    setCurrent('');
    setDone(true);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    setDone(false);
    void change.run();
  };

  return (
    <form onSubmit={submit} class="card" aria-labelledby="email-title">
      <h2 id="email-title">Email address</h2>
      <p>
        You sign in as <strong>{session.user.email}</strong>.
      </p>
      <TextField
        id="email-new"
        label="New email address"
        type="email"
        autocomplete="email"
        required
        value={email}
        onValue={setEmail}
      />
      <TextField
        id="email-current-password"
        label="Current password"
        type="password"
        autocomplete="current-password"
        required
        value={current}
        onValue={setCurrent}
      />
      <ErrorAlert error={change.error} />
      {done && (
        <p class="alert alert-success" role="status">
          Email changed: sign in with the new address from now on.
        </p>
      )}
      <button type="submit" class="button primary" disabled={change.busy}>
        Change email
      </button>
    </form>
  );
}
