import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';

export function PasswordPage() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(false);
    if (next !== repeat) {
      setError(new Error('The two new passwords differ.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api('/internal/auth/password', {
        method: 'POST',
        body: { current_password: current, new_password: next },
        expectUnauthorized: true,
      });
      setCurrent('');
      setNext('');
      setRepeat('');
      setDone(true);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="narrow">
      <PageHeader title="Change password" />
      <form onSubmit={submit} class="card">
        <div class="field">
          <label for="password-current">Current password</label>
          <input
            id="password-current"
            type="password"
            autocomplete="current-password"
            required
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="password-new">New password</label>
          <input
            id="password-new"
            type="password"
            autocomplete="new-password"
            required
            minLength={8}
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="password-repeat">New password again</label>
          <input
            id="password-repeat"
            type="password"
            autocomplete="new-password"
            required
            value={repeat}
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </div>
        <ErrorAlert error={error} />
        {done && (
          <p class="alert alert-success" role="status">
            Password changed. Your other sessions have been signed out.
          </p>
        )}
        <button type="submit" class="button primary" disabled={busy}>
          Change password
        </button>
      </form>
    </main>
  );
}
