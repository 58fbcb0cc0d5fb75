import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { type ActivityEntry, ActivityList, actorLabel, entityLabel } from '../components/activity-list.js';
import { PageHeader } from '../components/page.js';
import { setParams, useParams } from '../url-state.js';

const ENTITY_TYPES = [
  'asset',
  'location',
  'tag',
  'api_key',
  'reader',
  'scan_point',
  'user',
  'invitation',
  'organization',
  'two_factor',
];

type Actor = ActivityEntry['actor'];
const actorKey = (a: Actor) => (a.id === null ? a.type : `${a.type}:${a.id}`);

/** `datetime-local` value (local time, no zone) ↔ the RFC 3339 instant the API takes. */
const toInstant = (local: string) => (local ? new Date(local).toISOString() : '');
function toLocal(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The organization's activity log: who changed what, filtered by kind of record, actor and
 * time range. The filters live in the URL, so a filtered view can be shared or reloaded.
 */
export function ActivityPage() {
  const params = useParams();
  const [actors, setActors] = useState<Actor[]>([]);
  useEffect(() => {
    api<{ data: Actor[] }>('/internal/activity/actors')
      .then((res) => setActors(res.data))
      .catch(() => setActors([]));
  }, []);

  const entityType = params.get('entity_type') ?? '';
  const actor = params.get('actor') ?? '';
  const since = params.get('since');
  const until = params.get('until');
  const [actorType, actorId] = actor.includes(':') ? actor.split(/:(.*)/s) : [actor, undefined];

  const query = {
    entity_type: entityType || undefined,
    actor_type: actorType || undefined,
    actor_id: actorId || undefined,
    since: since || undefined,
    until: until || undefined,
  };
  const set = (patch: Record<string, string>) => setParams({ ...patch, page: null });

  return (
    <main id="main">
      <PageHeader title="Activity" />
      <p class="muted">Who changed which record, when, and what it was before and after.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Activity filters">
        <div class="field">
          <label for="activity-entity">Kind of record</label>
          <select
            id="activity-entity"
            value={entityType}
            onChange={(e) => set({ entity_type: e.currentTarget.value })}
          >
            <option value="">All</option>
            {ENTITY_TYPES.map((t) => (
              <option key={t} value={t}>
                {entityLabel(t)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="activity-actor">By</label>
          <select id="activity-actor" value={actor} onChange={(e) => set({ actor: e.currentTarget.value })}>
            <option value="">Anyone</option>
            {actors.map((a) => (
              <option key={actorKey(a)} value={actorKey(a)}>
                {actorLabel(a)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="activity-since">From</label>
          <input
            id="activity-since"
            type="datetime-local"
            value={toLocal(since)}
            onChange={(e) => set({ since: toInstant(e.currentTarget.value) })}
          />
        </div>
        <div class="field">
          <label for="activity-until">Until</label>
          <input
            id="activity-until"
            type="datetime-local"
            value={toLocal(until)}
            onChange={(e) => set({ until: toInstant(e.currentTarget.value) })}
          />
        </div>
      </form>
      <ActivityList query={query} label="Activity" limit={50} urlPage />
    </main>
  );
}
