import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { formatDateTime } from '../format.js';
import { CopyField } from './copy-field.js';
import { ErrorAlert } from './errors.js';
import { useAction } from './use-action.js';

interface IssuedReset {
  data: { email: string; expires_at: string };
  token: string;
  url: string;
}

/**
 * "Reset link" for a member who forgot their password: the admin gets a single-use link to
 * pass on (no mail is sent), shown once; a new one replaces it.
 */
export function ResetLinkButton({ userId, email }: { userId: number | string; email: string }) {
  const [issued, setIssued] = useState<IssuedReset | null>(null);
  const issue = useAction(async () => {
    setIssued(await api<IssuedReset>(`/internal/members/${userId}/password-reset`, { method: 'POST' }));
  });
  return (
    <>
      <button
        type="button"
        class="button secondary"
        aria-label={`Password reset link for ${email}`}
        disabled={issue.busy}
        onClick={issue.run}
      >
        Reset link
      </button>
      {issued && (
        <div class="reset-link">
          <p>
            Send this to {issued.data.email}: it sets a new password once, until{' '}
            {formatDateTime(issued.data.expires_at)}, and is shown <strong>only now</strong>.
          </p>
          <CopyField id={`reset-link-${userId}`} label={`Reset link for ${email}`} value={issued.url} />
        </div>
      )}
      <ErrorAlert error={issue.error} />
    </>
  );
}
