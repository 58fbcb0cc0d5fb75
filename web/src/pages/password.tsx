import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { TextField } from '../components/text-field.js';

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
