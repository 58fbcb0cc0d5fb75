import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, type Role, type Session, setCsrfToken, setUnauthorizedHandler } from './api.js';
import { ErrorAlert } from './components/errors.js';
import { forgetKeptInput, keepInputFor } from './components/kept-input.js';
import { ActivityPage } from './pages/activity.js';
import { AssetPage, NewAssetPage } from './pages/asset-page.js';
import { AssetsPage, ReportPage } from './pages/assets.js';
import { SignIn, SignUp } from './pages/auth.js';
import { HandheldPage } from './pages/handheld.js';
import { ImportPage } from './pages/import.js';
import { InvitationPage } from './pages/invitation.js';
import { KeysPage } from './pages/keys.js';
import { LocationsPage } from './pages/locations.js';
import { MembersPage } from './pages/members.js';
import { PasswordPage } from './pages/password.js';
import { ReadersPage } from './pages/readers.js';
import { ResetPasswordPage } from './pages/reset-password.js';
import { WebhooksPage } from './pages/webhooks.js';
import { Link, match, navigate, useLocation } from './router.js';
import { SessionContext, useCan, useSession } from './session.js';

const PUBLIC = new Set(['/sign-in', '/sign-up']);

/** The invitation link's page: shown signed in or out (accepting signs in as the invited person). */
const INVITATION = '/invitation';
/** The password reset link's page: likewise shown signed in or out. */
const RESET = '/reset-password';

/** The main navigation; `role`: the least role the page is offered to (docs/web-app.md). */
const NAV: { href: string; label: string; role: Role; readOnlyLabel?: string }[] = [
  { href: '/locations', label: 'Locations', role: 'viewer' },
  { href: '/assets', label: 'Assets', role: 'viewer' },
  { href: '/report', label: 'Report', role: 'viewer' },
  { href: '/readers', label: 'Readers', role: 'viewer' },
  { href: '/handheld', label: 'Handheld', role: 'editor' },
  // A viewer may still export: the same page without its import card, named for what is left.
  { href: '/import', label: 'Import', role: 'viewer', readOnlyLabel: 'Export' },
  { href: '/activity', label: 'Activity', role: 'viewer' },
];

/** Pages that need more than viewing; anybody else reaching them by URL is told so. */
const PAGE_ROLE: Record<string, Role> = {
  '/assets/new': 'editor',
  '/handheld': 'editor',
  '/keys': 'admin',
  '/webhooks': 'admin',
  '/members': 'admin',
};

function AccountMenu() {
  const { session, setSession } = useSession();
  const can = useCan();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const root = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const { path } = useLocation();

  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        toggle.current?.focus();
      }
    };
    const onPointer = (e: Event) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);

  const signOut = async () => {
    try {
      await api('/internal/auth/sign-out', { method: 'POST', expectUnauthorized: true });
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) {
        setError(e);
        return;
      }
    }
    forgetKeptInput();
    setSession(null);
    navigate('/sign-in', { replace: true });
  };

  return (
    <div
      class="account-menu"
      ref={root}
      onFocusOut={(e) => {
        if (!root.current?.contains(e.relatedTarget as Node | null) && e.relatedTarget) setOpen(false);
      }}
    >
      <button
        type="button"
        ref={toggle}
        class="account-toggle"
        aria-expanded={open}
        aria-controls="account-panel"
        onClick={() => setOpen(!open)}
      >
        <span class="visually-hidden">Account: </span>
        <span class="account-email">{session.user.email}</span>
        <span aria-hidden="true"> ▾</span>
      </button>
      <div id="account-panel" class="account-panel" hidden={!open}>
        <p class="account-org">
          <span class="muted">Organization</span>
          <br />
          <strong>{session.organization.name}</strong>
          <br />
          <span class="muted">Your role: {session.user.role}</span>
        </p>
        <ul>
          {can('admin') && (
            <>
              <li>
                <Link href="/members">Members</Link>
              </li>
              <li>
                <Link href="/keys">API keys</Link>
              </li>
              <li>
                <Link href="/webhooks">Webhooks</Link>
              </li>
            </>
          )}
          <li>
            <Link href="/password">Change password</Link>
          </li>
          <li>
            <button type="button" class="button link" onClick={signOut}>
              Sign out
            </button>
          </li>
        </ul>
        <ErrorAlert error={error} />
      </div>
    </div>
  );
}

function Shell({ path }: { path: string }) {
  const can = useCan();
  const history = match('/history/:id', path);
  const asset = match('/assets/:id', path);
  // The history page of earlier versions is part of the asset's page now.
  useEffect(() => {
    if (history?.id) navigate(`/assets/${encodeURIComponent(history.id)}`, { replace: true });
  }, [history?.id]);
  let page = <NotFound />;
  if (path === '/locations') page = <LocationsPage />;
  else if (path === '/assets') page = <AssetsPage />;
  else if (path === '/assets/new') page = <NewAssetPage />;
  else if (asset?.id) page = <AssetPage key={asset.id} assetId={asset.id} />;
  else if (history?.id) page = <main id="main" />;
  else if (path === '/report') page = <ReportPage />;
  else if (path === '/readers') page = <ReadersPage />;
  else if (path === '/handheld') page = <HandheldPage />;
  else if (path === '/import') page = <ImportPage />;
  else if (path === '/keys') page = <KeysPage />;
  else if (path === '/webhooks') page = <WebhooksPage />;
  else if (path === '/password') page = <PasswordPage />;
  else if (path === '/members') page = <MembersPage />;
  else if (path === '/activity') page = <ActivityPage />;
  const needed = PAGE_ROLE[path];
  if (needed && !can(needed)) page = <NotAllowed needed={needed} />;

  return (
    <>
      <header class="app-header">
        <div class="header-inner">
          <Link href="/locations" class="brand">
            tagtrail
          </Link>
          <nav aria-label="Main" class="main-nav">
            <ul>
              {NAV.filter((item) => can(item.role)).map((item) => {
                const current =
                  path === item.href || (item.href === '/assets' && path.startsWith('/assets/'));
                return (
                  <li key={item.href}>
                    <Link href={item.href} aria-current={current ? 'page' : undefined}>
                      {!can('editor') && item.readOnlyLabel ? item.readOnlyLabel : item.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <AccountMenu />
        </div>
      </header>
      <div class="content">{page}</div>
    </>
  );
}

function NotAllowed({ needed }: { needed: Role }) {
  const { session } = useSession();
  useEffect(() => {
    document.title = 'Not allowed · tagtrail';
  }, []);
  return (
    <main id="main">
      <h1>Not allowed</h1>
      <p>
        This page needs the {needed} role; you are {session.user.role === 'editor' ? 'an' : 'a'}{' '}
        {session.user.role}. An admin of {session.organization.name} can change your role.
      </p>
      <p>
        <Link href="/locations">Go to the locations</Link>
      </p>
    </main>
  );
}

function NotFound() {
  useEffect(() => {
    document.title = 'Not found · tagtrail';
  }, []);
  return (
    <main id="main">
      <h1>Page not found</h1>
      <p>
        <Link href="/locations">Go to the locations</Link>
      </p>
    </main>
  );
}

export function App() {
  const { path, search } = useLocation();
  // undefined while the first session check runs; null when signed out.
  const [session, setSessionState] = useState<Session | null | undefined>(undefined);
  const [bootError, setBootError] = useState<unknown>(null);

  const setSession = (next: Session | null) => {
    setCsrfToken(next?.csrf_token ?? null);
    if (next) keepInputFor(`${next.user.id}@${next.organization.id}`);
    setSessionState(next);
  };

  useEffect(() => {
    setUnauthorizedHandler(() => setSession(null));
    api<{ data: Session }>('/internal/session', { expectUnauthorized: true })
      .then((res) => setSession(res.data))
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) setSession(null);
        else setBootError(e);
      });
    return () => setUnauthorizedHandler(null);
  }, []);

  // Signed-out visitors go to sign-in (and come back after); signed-in ones skip it.
  const isPublic = PUBLIC.has(path);
  useEffect(() => {
    if (session === undefined || path === INVITATION || path === RESET) return;
    if (session === null && !isPublic) {
      const here =
        path === '/' ? '' : `?next=${encodeURIComponent(path + (search.size ? `?${search}` : ''))}`;
      navigate(`/sign-in${here}`, { replace: true });
    } else if (session?.totp_enrolment_required && path !== '/password') {
      // The organization requires two-factor sign-in: the session reaches only enrolment.
      navigate('/password', { replace: true });
    } else if (session && (isPublic || path === '/')) {
      navigate('/locations', { replace: true });
    }
  }, [session, path, isPublic, search]);

  if (bootError) {
    return (
      <main id="main" class="auth-card">
        <h1>tagtrail</h1>
        <ErrorAlert error={bootError} />
        <button type="button" class="button primary" onClick={() => window.location.reload()}>
          Try again
        </button>
      </main>
    );
  }
  if (session === undefined) {
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  }
  if (path === INVITATION) return <InvitationPage onSession={setSession} />;
  if (path === RESET) return <ResetPasswordPage />;
  if (session === null) {
    if (path === '/sign-up') return <SignUp onSession={setSession} />;
    if (path === '/sign-in') return <SignIn onSession={setSession} />;
    return null;
  }
  if (isPublic || path === '/') return null;
  // Until they enrol, the session reaches nothing else: no page may load its data meanwhile.
  if (session.totp_enrolment_required && path !== '/password') return null;
  return (
    <SessionContext.Provider value={{ session, setSession }}>
      <Shell path={path} />
    </SessionContext.Provider>
  );
}
