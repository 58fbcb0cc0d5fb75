import { useEffect, useRef } from 'preact/hooks';
import { ApiError, api } from './api.js';

/**
 * What changed in the organization, as GET /internal/live tells it: hints to refresh,
 * never data. `truncated`: too many ids to list (or the stream reconnected), so a view
 * should refresh whatever it shows.
 */
export interface LiveChange {
  types: string[];
  asset_ids: number[];
  location_ids: number[];
  truncated: boolean;
}

type Listener = (change: LiveChange) => void;

/** How long to wait before reopening a stream the browser gave up on (the service's `retry:`). */
const REOPEN_MS = 3000;

/**
 * The wait before reopening, given what the session probe answered: 3 s, or longer when the
 * probe was refused with Retry-After (the session's request budget is spent: the stream was
 * refused with the same 429, and reopening sooner would only be refused again).
 */
export function reopenDelayMs(probeError: unknown): number {
  const asked = probeError instanceof ApiError ? (probeError.retryAfterSeconds ?? 0) : 0;
  return Math.max(REOPEN_MS, asked * 1000);
}

const listeners = new Set<Listener>();
let source: EventSource | null = null;
let reopenTimer: ReturnType<typeof setTimeout> | null = null;
let checking = false;

const notify = (change: LiveChange) => {
  for (const l of listeners) l(change);
};

function open(): void {
  const stream = new EventSource('/internal/live');
  source = stream;
  stream.addEventListener('change', (e) =>
    notify(JSON.parse((e as MessageEvent<string>).data) as LiveChange),
  );
  // The service sends `ready` once it listens for this stream, on the first connection
  // and after every reconnect. A change made before that (after the view's own fetch,
  // while the stream was opening, or while it was down) was never sent: refresh once.
  stream.addEventListener('ready', () =>
    notify({ types: [], asset_ids: [], location_ids: [], truncated: true }),
  );
  stream.addEventListener('error', () => void checkSession(stream));
}

/**
 * The service ends a stream when its session ends (sign-out elsewhere, removal from the
 * organization), and the browser's reconnection then meets a 401 and gives up without
 * saying why. So every drop asks the session probe: a 401 there goes through the app's
 * unauthorized handler to sign-in at once, instead of on the page's next call. A service
 * that is only restarting answers the probe (or not at all); the stream is then kept, and
 * reopened if the browser gave up on it (a proxy's 502 while the service was down, or a
 * 429 once the session spent its request budget: the probe meets that 429 too, and its
 * Retry-After sets the wait).
 */
async function checkSession(stream: EventSource): Promise<void> {
  if (checking) return;
  checking = true;
  let probeError: unknown = null;
  try {
    await api('/internal/session');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      // api() has called the unauthorized handler; the stream must not retry meanwhile.
      if (source === stream) close();
      return;
    }
    probeError = e;
  } finally {
    checking = false;
  }
  if (source === stream && stream.readyState === EventSource.CLOSED && reopenTimer === null) {
    reopenTimer = setTimeout(() => {
      reopenTimer = null;
      if (source === stream && listeners.size > 0) open();
    }, reopenDelayMs(probeError));
  }
}

function close(): void {
  if (reopenTimer !== null) clearTimeout(reopenTimer);
  reopenTimer = null;
  source?.close();
  source = null;
}

/** One stream for the whole app, open while some view listens. */
function subscribe(listener: Listener): () => void {
  listeners.add(listener);
  if (!source && typeof EventSource !== 'undefined') open();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) close();
  };
}

/**
 * Calls `refresh` when a change concerns the view (`concerns`, default: any change),
 * at most once per `quietMs`: a burst of reads is one refresh. The view refreshes in
 * place (same page, same selection), so the user's scroll position stays.
 */
export function useLiveRefresh(
  refresh: () => void,
  concerns: (change: LiveChange) => boolean = () => true,
  quietMs = 500,
): void {
  const latest = useRef({ refresh, concerns });
  latest.current = { refresh, concerns };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const unsubscribe = subscribe((change) => {
      if (!change.truncated && !latest.current.concerns(change)) return;
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        latest.current.refresh();
      }, quietMs);
    });
    return () => {
      if (timer !== null) clearTimeout(timer);
      unsubscribe();
    };
  }, [quietMs]);
}

/** Changes that move assets or change what is shown of them. */
export const TRACKING_TYPES = ['asset.moved', 'asset.first_seen', 'asset.not_seen'];
export const touchesAssets = (c: LiveChange) => c.types.some((t) => t.startsWith('asset.'));
export const touchesLocations = (c: LiveChange) =>
  c.types.some((t) => t.startsWith('location.') || TRACKING_TYPES.includes(t));
