import { useEffect, useState } from 'preact/hooks';
import { api, type InvitationPreview, type Session } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { NewPasswordField } from '../components/text-field.js';
import { submitting, useAction } from '../components/use-action.js';
import { formatDateTime } from '../format.js';
import { navigate } from '../router.js';

/** The token of the link `/invitation#<token>`: in the fragment, which is never sent to the server. */
const tokenOfLink = () => window.location.hash.replace(/^#/, '');

/**
 * The page an invitation link opens: what it invites to, and a password to accept it with.
 * Accepting signs the person in (as themselves, even if another account was signed in here).
 */
export function InvitationPage({ onSession }: { onSession(session: Session): void }) {
  const [token] = useState(tokenOfLink);
  const [preview, setPreview] = useState<InvitationPreview | null>(null);
  const [lookupError, setLookupError] = useState<unknown>(null);
  const [password, setPassword] = useState('');

  useEffect(() => {
    api<{ data: InvitationPreview }>('/internal/invitations/lookup', {
      method: 'POST',
      body: { token },
      expectUnauthorized: true,
    })
      .then((res) => setPreview(res.data))
      .catch(setLookupError);
  }, [token]);

  const { error, busy, run } = useAction(
    async () => {
      const res = await api<{ data: Session }>('/internal/invitations/accept', {
        method: 'POST',
        body: { token, password },
        expectUnauthorized: true,
      });
      onSession(res.data);
      navigate('/locations', { replace: true });
    },
    { busyAfterSuccess: true },
  );

  return (
    <main class="auth-card" id="main">
      <p class="auth-brand">tagtrail</p>
      <PageHeader title="Accept the invitation" />
      <ErrorAlert error={lookupError} />
      {preview && (
        <form onSubmit={submitting(run)} aria-describedby={error ? 'accept-error' : undefined}>
          <p>
            You are invited to <strong>{preview.organization.name}</strong> as <strong>{preview.role}</strong>
            , with the address <strong>{preview.email}</strong>. The link works until{' '}
            {formatDateTime(preview.expires_at)}.
          </p>
          <input type="email" hidden readOnly autocomplete="username" value={preview.email} />
          <NewPasswordField
            id="accept-password"
            label="Choose a password"
            value={password}
            onValue={setPassword}
          />
          <ErrorAlert error={error} id="accept-error" />
          <button type="submit" class="button primary" disabled={busy}>
            {busy ? 'Creating your account…' : 'Create my account'}
          </button>
        </form>
      )}
    </main>
  );
}
