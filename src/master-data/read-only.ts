import type { FieldError } from '../errors.js';
import { validationError } from '../errors.js';
import { parseRfc3339 } from '../http/timestamps.js';

/**
 * PATCH's accept-if-matches rule for fields a client may echo but not change
 * (API-SPEC "PATCH asset rules" 4-6): an equal value is dropped silently, a differing
 * one is a field error. Datetimes compare by instant; tags compare as a set.
 */
export type Comparison = 'scalar' | 'instant' | 'tags';

export interface ReadOnlyRule {
  field: string;
  compare: Comparison;
  /** Current value as the API shows it (wire form). */
  current: unknown;
  /** Error for a differing value. */
  onDiffer: (sent: unknown) => Omit<FieldError, 'field'>;
}

interface TagLike {
  id?: number;
  tag_type: string;
  value: string;
}

function instantOf(value: unknown): number | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'string') return undefined;
  return parseRfc3339(value) ?? undefined;
}

/**
 * Full tag content compared as a set (API-SPEC PATCH rule 4): every tag sent is one of the
 * current ones, the same type and value and, where it gives one, the same id; and every
 * current tag was sent. An echo may leave the ids out; a tag listed twice is one tag. A
 * tag's type and value are unique in the organization, so they find it.
 */
function sameTags(sent: TagLike[], current: TagLike[]): boolean {
  const content = (t: TagLike) => JSON.stringify([t.tag_type, t.value]);
  const byContent = new Map(current.map((t) => [content(t), t]));
  const echoed = new Set<TagLike>();
  for (const tag of sent) {
    const match = byContent.get(content(tag));
    if (!match || (tag.id !== undefined && tag.id !== match.id)) return false;
    echoed.add(match);
  }
  return echoed.size === byContent.size;
}

export function matches(compare: Comparison, sent: unknown, current: unknown): boolean {
  switch (compare) {
    case 'instant':
      return instantOf(sent) === instantOf(current);
    case 'tags':
      return (
        Array.isArray(sent) && Array.isArray(current) && sameTags(sent as TagLike[], current as TagLike[])
      );
    default:
      return sent === current;
  }
}

/** Throws one validation error listing every differing read-only field. */
export function enforceReadOnly(body: Record<string, unknown>, rules: ReadOnlyRule[]): void {
  const errors: FieldError[] = [];
  for (const rule of rules) {
    if (!(rule.field in body)) continue;
    const sent = body[rule.field];
    if (!matches(rule.compare, sent, rule.current))
      errors.push({ field: rule.field, ...rule.onDiffer(sent) });
  }
  // PATCH rule 6: a stale updated_at is fields[0], whatever else differs.
  errors.sort((a, b) => Number(b.field === 'updated_at') - Number(a.field === 'updated_at'));
  if (errors.length > 0) throw validationError(errors);
}

export const readOnlyDiffer =
  (field: string) =>
  (_sent: unknown): Omit<FieldError, 'field'> => ({
    code: 'read_only',
    message: `${field} is read-only and differs from the current value`,
    params: {},
  });

/** Stale `updated_at`: the record changed since the client read it (lost-update check). */
export const staleUpdatedAt =
  (current: string) =>
  (sent: unknown): Omit<FieldError, 'field'> => ({
    code: 'read_only',
    message: `updated_at mismatch: sent ${String(sent)} but the current value is ${current}; the record changed since it was read`,
    params: { current },
  });
