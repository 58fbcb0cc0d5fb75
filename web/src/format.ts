/**
 * A time carries its zone's short name ("Dec 4, 2026, 10:15 AM UTC"): without it nobody can
 * tell the browser's local time from UTC. dateStyle/timeStyle refuse timeZoneName, hence the
 * fields spelled out (the same as medium date, short time).
 */
const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
});
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined, empty = '—'): string {
  if (!iso) return empty;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function formatDate(iso: string | null | undefined, empty = '—'): string {
  if (!iso) return empty;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateOnly.format(d);
}

/** "3 d 4 h", "2 h 5 min", "45 s": the two largest units. */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const units: [string, number][] = [
    ['d', 86400],
    ['h', 3600],
    ['min', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || (parts.length === 0 && size === 1)) parts.push(`${n} ${name}`);
    if (parts.length === 2) break;
    if (parts.length === 1 && n === 0) break;
  }
  return parts.join(' ');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A stay of an asset's history, as the internal history rows give it. */
export interface Stay {
  event_observed_at: string;
  duration_seconds: number;
  /** The newest stay: still going on. */
  current: boolean;
}

/**
 * How long a stay lasted, for the timeline. A past stay lasted until the next arrival
 * ("for 2 h 5 min"). The current stay has not ended: the API's duration only runs to the
 * last sighting so far (0 for a stay seen once), so it is shown as ongoing, measured up to
 * `now` ("since … · 3 h so far").
 */
export function describeStay(stay: Stay, now: Date = new Date()): string {
  if (!stay.current) return `for ${formatDuration(stay.duration_seconds)}`;
  const since = `since ${formatDateTime(stay.event_observed_at)}`;
  const elapsed = (now.getTime() - new Date(stay.event_observed_at).getTime()) / 1000;
  if (!Number.isFinite(elapsed) || elapsed < 60) return `${since} · just arrived`;
  return `${since} · ${formatDuration(elapsed)} so far`;
}
