import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { submitting, useAction } from '../components/use-action.js';
import { Link } from '../router.js';

/** The token of the link `/reset-password#<token>`: in the fragment, never sent to the server. */
const tokenOfLink = () => window.location.hash.replace(/^#/, '');

/** The page a password reset link opens (an admin issued it): choose a new password, once. */
export function ResetPasswordPage() {
  const [token] = useState(tokenOfLink);
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);

  const { error, busy, run } = useAction(async () => {
    await api('/internal/auth/password-reset', {
      method: 'POST',
      body: { token, new_password: password },
      expectUnauthorized: true,
    });
    setDone(true);
  });

  return (
    <main class="auth-card" id="main">
      <p class="auth-brand">tagtrail</p>
      <PageHeader title="Choose a new password" />
      {done ? (
        <>
          <p class="alert alert-success" role="status">
            Your password is set. Every session you had has been signed out.
          </p>
          <p>
            <Link href="/sign-in">Sign in</Link>
          </p>
        </>
      ) : (
        <form onSubmit={submitting(run)}>
          <div class="field">
            <label for="reset-password">New password</label>
            <input
              id="reset-password"
              type="password"
              autocomplete="new-password"
              required
              minLength={8}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </div>
          <ErrorAlert error={error} />
          <button type="submit" class="button primary" disabled={busy}>
            Set the password
          </button>
        </form>
      )}
    </main>
  );
}
