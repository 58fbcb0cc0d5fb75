import { useEffect } from 'preact/hooks';
import type { Query } from '../api.js';
import { formatDateTime } from '../format.js';
import { ErrorAlert } from './errors.js';
import { isEmpty, Pager, usePaged } from './paging.js';

/** One entry of the activity log (docs/web-app.md "Activity log"). */
export interface ActivityEntry {
  id: number;
  occurred_at: string;
  actor: { type: 'user' | 'api_key' | 'cli' | 'system'; id: string | null; name: string | null };
  entity_type: string;
  entity_id: string;
  action: 'created' | 'updated' | 'deleted';
  record_type: string;
  record_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const ENTITY_LABEL: Record<string, string> = {
  asset: 'Asset',
  location: 'Location',
  tag: 'Tag',
  api_key: 'API key',
  reader: 'Reader',
  scan_point: 'Scan point',
  user: 'Member',
  invitation: 'Invitation',
  organization: 'Organization',
  two_factor: 'Two-factor sign-in',
};

/** What a deletion is called for each kind of record (a key is revoked, a tag detached…). */
const DELETED_LABEL: Record<string, string> = {
  api_key: 'revoked',
  tag: 'detached',
  user: 'removed',
  invitation: 'revoked',
  two_factor: 'turned off',
};

/** What a creation is called where "created" reads oddly. */
const CREATED_LABEL: Record<string, string> = { two_factor: 'turned on' };

/** The action's word: a person's two-factor sign-in deleted by somebody else was reset. */
function actionLabel(entry: ActivityEntry): string {
  if (entry.action === 'created') return CREATED_LABEL[entry.entity_type] ?? 'created';
  if (entry.action === 'updated') return 'updated';
  if (entry.entity_type === 'two_factor' && entry.actor.id !== entry.entity_id) return 'reset';
  return DELETED_LABEL[entry.entity_type] ?? 'deleted';
}

export const entityLabel = (type: string) => ENTITY_LABEL[type] ?? type;

export function actorLabel(actor: ActivityEntry['actor']): string {
  if (actor.type === 'user') return actor.name ?? `user ${actor.id}`;
  if (actor.type === 'api_key') return `API key “${actor.name ?? actor.id}”`;
  if (actor.type === 'cli') return `${actor.name ?? 'operator'} (command line)`;
  return 'the system';
}

const SECRET = /_hash$/;

function show(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The fields an update changed, with their values before and after. */
export function changes(entry: ActivityEntry): { field: string; before: string; after: string }[] {
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return fields
    .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))
    .map((f) =>
      SECRET.test(f)
        ? { field: f.replace(SECRET, ''), before: 'secret', after: 'changed' }
        : { field: f, before: show(before[f]), after: show(after[f]) },
    );
}

/** A line naming the record: its key or name where the values have one. */
function recordName(entry: ActivityEntry): string {
  const v = entry.after ?? entry.before ?? {};
  if (entry.entity_type === 'two_factor') return `Two-factor sign-in of member #${entry.entity_id}`;
  const name = v.external_key ?? v.name ?? v.email ?? v.value;
  return `${entityLabel(entry.entity_type)} ${typeof name === 'string' ? name : `#${entry.entity_id}`}`;
}

function Entry({ entry }: { entry: ActivityEntry }) {
  const action = actionLabel(entry);
  const changed = entry.action === 'updated' ? changes(entry) : [];
  return (
    <li class="activity-entry">
      <div>
        <time dateTime={entry.occurred_at}>{formatDateTime(entry.occurred_at)}</time>{' '}
        <strong>{recordName(entry)}</strong> {action} by {actorLabel(entry.actor)}
      </div>
      {changed.length > 0 && (
        <ul class="activity-changes">
          {changed.map((c) => (
            <li key={c.field}>
              <span class="mono">{c.field}</span>: <del>{c.before}</del> → <ins>{c.after}</ins>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** A page of the activity log for `query` (filters of GET /internal/activity), newest first. */
export function ActivityList({
  query,
  label,
  version = 0,
  limit = 25,
  urlPage = false,
}: {
  query: Query;
  label: string;
  version?: number;
  limit?: number;
  urlPage?: boolean;
}) {
  const activity = usePaged<ActivityEntry>('/internal/activity', query, limit, { urlPage });
  const { reload } = activity;
  // A write on the page reloads the record; its activity follows.
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  return (
    <>
      <ErrorAlert error={activity.error} />
      {isEmpty(activity) && <p class="empty">No activity recorded.</p>}
      <ol class="activity" aria-label={label}>
        {activity.rows.map((entry) => (
          <Entry key={entry.id} entry={entry} />
        ))}
      </ol>
      <Pager paged={activity} label={label} />
    </>
  );
}

/** The activity of one record (its own and its tags' or scan points'), for its page. */
export function RecordActivity({
  type,
  id,
  version,
  heading = 'h2',
}: {
  type: string;
  id: number;
  version: number;
  heading?: 'h2' | 'h3';
}) {
  const H = heading;
  const titleId = `activity-${type}-${id}-title`;
  return (
    <section class="card" aria-labelledby={titleId}>
      <H id={titleId}>Activity</H>
      <ActivityList
        query={{ record_type: type, record_id: id }}
        label={`Activity of this ${entityLabel(type).toLowerCase()}`}
        version={version}
        limit={10}
      />
    </section>
  );
}
