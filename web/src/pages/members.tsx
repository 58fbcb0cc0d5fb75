import { useEffect, useState } from 'preact/hooks';
import { api, type Invitation, type IssuedInvitation, type Member, type Role } from '../api.js';
import { ConfirmedAction } from '../components/confirm.js';
import { CopyField } from '../components/copy-field.js';
import { ErrorAlert } from '../components/errors.js';
import { FormAlert, useFormErrors } from '../components/form-errors.js';
import { EmptyRow, focusListTitle, ListSection, TableHead } from '../components/list-layout.js';
import { PageHeader } from '../components/page.js';
import { usePaged } from '../components/paging.js';
import { ResetLinkButton } from '../components/reset-link.js';
import { ShownOncePanel } from '../components/shown-once.js';
import { TableWrap } from '../components/table-wrap.js';
import { TextField } from '../components/text-field.js';
import { submitting, useAction, useRequestThenReload } from '../components/use-action.js';
import { formatDate, formatDateTime } from '../format.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { TwoFactorRequirement } from './two-factor.js';
import { TwoFactorReset } from './two-factor-recovery.js';

const ROLES: { id: Role; label: string; what: string }[] = [
  { id: 'viewer', label: 'Viewer', what: 'reads everything, changes nothing' },
  { id: 'editor', label: 'Editor', what: 'also locations, assets, tags, imports and handheld inventories' },
  { id: 'admin', label: 'Admin', what: 'also members, API keys and readers' },
];

function RoleSelect({
  id,
  value,
  onValue,
  label,
  disabled = false,
}: {
  id: string;
  value: Role;
  onValue(r: Role): void;
  label: string;
  disabled?: boolean;
}) {
  return (
    <select
      id={id}
      aria-label={label}
      value={value}
      disabled={disabled}
      aria-busy={disabled}
      onChange={(e) => onValue(e.currentTarget.value as Role)}
    >
      {ROLES.map((r) => (
        <option key={r.id} value={r.id}>
          {r.label}
        </option>
      ))}
    </select>
  );
}

/** The link of a new or resent invitation, shown once for the admin to pass on. */
function InvitationLink({ issued, onDone }: { issued: IssuedInvitation; onDone(): void }) {
  return (
    <ShownOncePanel
      titleId="link-title"
      title={`Invitation link for ${issued.data.email}`}
      doneLabel="Done"
      onDone={onDone}
    >
      {issued.emailed ? (
        <p class="alert alert-success" role="status">
          Emailed to {issued.data.email}.
        </p>
      ) : (
        issued.email_error && (
          <p class="alert alert-error" role="alert">
            The mail could not be sent ({issued.email_error}); pass the link on yourself.
          </p>
        )
      )}
      <p>
        {issued.emailed
          ? 'The same link, should the mail not arrive'
          : `Send this link to ${issued.data.email}`}
        . It works once, until {formatDateTime(issued.data.expires_at)}, and is shown{' '}
        <strong>only now</strong>: resending makes a new one.
      </p>
      <CopyField id="invitation-link" label="Invitation link" value={issued.url} />
    </ShownOncePanel>
  );
}

function InviteForm({ onIssued }: { onIssued(issued: IssuedInvitation): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const { run, busy, error } = useAction(async () => {
    onIssued(await api<IssuedInvitation>('/internal/invitations', { method: 'POST', body: { email, role } }));
    setEmail('');
  });
  // A refused address is said under the field, and goes once the address is retyped: in an
  // alert above the button it stayed there, saying the new address was wrong too.
  const errors = useFormErrors(error, (field) => field === 'email');
  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby="invite-title" {...errors.listeners}>
      <h2 id="invite-title">Invite a person</h2>
      <TextField
        id="invite-email"
        label="Email"
        type="email"
        value={email}
        onValue={setEmail}
        required
        errors={errors}
        field="email"
      />
      <fieldset class="field">
        <legend>Role</legend>
        {ROLES.map((r) => (
          <label key={r.id} class="choice">
            <input
              type="radio"
              name="invite-role"
              value={r.id}
              checked={role === r.id}
              onChange={() => setRole(r.id)}
            />{' '}
            <strong>{r.label}</strong>: {r.what}
          </label>
        ))}
      </fieldset>
      <FormAlert errors={errors} />
      <button type="submit" class="button primary" disabled={busy}>
        Create invitation link
      </button>
    </form>
  );
}

function MemberRow({ member, onChanged }: { member: Member; onChanged(): void }) {
  const { session, setSession } = useSession();
  const [confirming, setConfirming] = useState(false);
  // The role the select shows: the choice at once, back to the stored one if refused. A
  // select bound to `member.role` alone would flip back on the re-render the request causes.
  const [role, setRole] = useState<Role>(member.role);
  const you = String(member.id) === String(session.user.id);
  const { run: act, busy, error } = useRequestThenReload(onChanged);
  // The stored role once it reloads (this change, or one made elsewhere). The row was keyed
  // by the role to start over with it, which remounted the row after every change and
  // dropped the focus from its select to the page body: a keyboard user choosing roles with
  // the arrow keys lost their place at the first change.
  useEffect(() => setRole(member.role), [member.role]);
  const changeRole = async (next: Role) => {
    setRole(next);
    const saved = await act(async () => {
      await api(`/internal/members/${member.id}/role`, { method: 'POST', body: { role: next } });
      // Stepping down takes this page away: follow the session's new role.
      if (you) setSession({ ...session, user: { ...session.user, role: next } });
    });
    if (!saved) setRole(member.role);
  };
  const remove = () =>
    act(async () => {
      await api(`/internal/members/${member.id}`, { method: 'DELETE', expectUnauthorized: you });
      if (you) {
        setSession(null);
        navigate('/sign-in', { replace: true });
      }
    });
  return (
    <tr>
      <th scope="row">
        {member.email}
        {you && <span class="muted"> (you)</span>}
      </th>
      <td>
        <RoleSelect
          id={`role-${member.id}`}
          label={`Role of ${member.email}`}
          value={role}
          disabled={busy}
          onValue={(next) => next !== role && changeRole(next)}
        />
      </td>
      <td>{formatDate(member.created_at)}</td>
      <td>
        <span class={`badge badge-${member.two_factor ? 'active' : 'expired'}`}>
          {member.two_factor ? 'on' : 'off'}
        </span>
      </td>
      <td class="actions">
        <ConfirmedAction
          label="Remove"
          ariaLabel={`Remove ${member.email}`}
          asking={confirming}
          onAsking={setConfirming}
          question={`Remove ${member.email}? Their sessions end now.`}
          yes="Yes, remove"
          busy={busy}
          onYes={remove}
        />{' '}
        {!you && <ResetLinkButton userId={member.id} email={member.email} />}{' '}
        {!you && member.two_factor && (
          <TwoFactorReset userId={member.id} email={member.email} onDone={onChanged} />
        )}
        <ErrorAlert error={error} />
      </td>
    </tr>
  );
}

function InvitationRow({
  item,
  onChanged,
  onIssued,
}: {
  item: Invitation;
  onChanged(): void;
  onIssued(issued: IssuedInvitation): void;
}) {
  // Resend and Revoke each void the link sent before, which the person may be about to
  // open: both ask first. Resend asked nothing, and a stray click killed the link in the
  // person's mail. A refusal closes the question; the error shows under the buttons.
  const [asking, setAsking] = useState<'resend' | 'revoke' | null>(null);
  const {
    run: act,
    busy,
    error,
  } = useAction((call: () => Promise<void>) => call(), {
    onError: () => setAsking(null),
  });
  const resend = () =>
    act(async () => {
      const issued = await api<IssuedInvitation>(`/internal/invitations/${item.id}/resend`, {
        method: 'POST',
      });
      setAsking(null);
      onIssued(issued);
    });
  const revoke = () =>
    act(async () => {
      await api(`/internal/invitations/${item.id}`, { method: 'DELETE' });
      // The row goes, with the focus on its "Yes, revoke": the list's heading takes it.
      focusListTitle('invitations');
      onChanged();
    });
  return (
    <tr>
      <th scope="row">{item.email}</th>
      <td>{item.role}</td>
      <td>{item.invited_by ?? '—'}</td>
      <td>
        <span class={`badge badge-${item.status === 'pending' ? 'active' : 'expired'}`}>{item.status}</span>{' '}
        {formatDateTime(item.expires_at)}
      </td>
      <td class="actions">
        {asking !== 'revoke' && (
          <ConfirmedAction
            label="Resend"
            ariaLabel={`Resend to ${item.email}`}
            asking={asking === 'resend'}
            onAsking={(yes) => setAsking(yes ? 'resend' : null)}
            question={`Send ${item.email} a new link? The link sent before stops working.`}
            yes="Yes, send a new link"
            busy={busy}
            onYes={resend}
          />
        )}{' '}
        {asking !== 'resend' && (
          <ConfirmedAction
            label="Revoke"
            ariaLabel={`Revoke invitation of ${item.email}`}
            asking={asking === 'revoke'}
            onAsking={(yes) => setAsking(yes ? 'revoke' : null)}
            question={`Revoke the invitation of ${item.email}? Its link stops working.`}
            yes="Yes, revoke"
            busy={busy}
            onYes={revoke}
          />
        )}
        <ErrorAlert error={error} />
      </td>
    </tr>
  );
}

export function MembersPage() {
  const members = usePaged<Member>('/internal/members', {}, 50);
  const invitations = usePaged<Invitation>('/internal/invitations', {}, 50);
  const [issued, setIssued] = useState<IssuedInvitation | null>(null);
  const show = (next: IssuedInvitation) => {
    setIssued(next);
    invitations.reload();
  };
  return (
    <main id="main">
      <PageHeader title="Members" />
      {issued ? (
        <InvitationLink issued={issued} onDone={() => setIssued(null)} />
      ) : (
        <InviteForm onIssued={show} />
      )}
      <ListSection id="members" title="People" list={members} pagerLabel="Members">
        <TableWrap label="People">
          <table>
            <TableHead columns={['Email', 'Role', 'Joined', 'Two-factor']} actions />
            <tbody>
              {members.rows.map((m) => (
                <MemberRow key={m.id} member={m} onChanged={members.reload} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      </ListSection>
      <TwoFactorRequirement />
      <ListSection id="invitations" title="Open invitations" list={invitations} pagerLabel="Invitations">
        <TableWrap label="Open invitations">
          <table>
            <TableHead columns={['Email', 'Role', 'Invited by', 'Link expires']} actions />
            <tbody>
              {invitations.rows.map((i) => (
                <InvitationRow
                  key={`${i.id}-${i.sent_at}`}
                  item={i}
                  onChanged={invitations.reload}
                  onIssued={show}
                />
              ))}
              <EmptyRow list={invitations} columns={5}>
                No open invitations.
              </EmptyRow>
            </tbody>
          </table>
        </TableWrap>
      </ListSection>
    </main>
  );
}
