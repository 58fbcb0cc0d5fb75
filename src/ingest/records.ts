import { isSentinelInstant, parseRfc3339, toWire } from '../http/timestamps.js';
import { DEFAULT_CLOCK_POLICY } from './clock-policy.js';

/**
 * One scan record from a handheld or an import file:
 * `{"observed_at", "asset_id"|"asset_external_key"|"tag", "location_id"|"location_external_key"|"location_tag"}`.
 */
export interface ScanRecord {
  observedAt: number;
  asset: { id: number } | { externalKey: string } | { tag: string };
  location: { id: number } | { externalKey: string } | { tag: string };
}

const ID_MAX = 2147483647;
const KEY = /^[A-Za-z0-9-]{1,255}$/;

function one<T>(obj: Record<string, unknown>, names: string[], what: string): [string, unknown] | string {
  const present = names.filter((n) => obj[n] !== undefined && obj[n] !== null);
  if (present.length === 0) return `${what}: one of ${names.join(', ')} is required`;
  if (present.length > 1) return `${what}: send only one of ${present.join(', ')}`;
  const name = present[0]!;
  return [name, obj[name] as T];
}

function ref(
  obj: Record<string, unknown>,
  names: [string, string, string],
  what: string,
): ScanRecord['asset'] | string {
  const found = one(obj, names, what);
  if (typeof found === 'string') return found;
  const [name, value] = found;
  if (name === names[0]) {
    return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= ID_MAX
      ? { id: value as number }
      : `${name} must be an integer in 1..${ID_MAX}`;
  }
  if (name === names[1]) {
    return typeof value === 'string' && KEY.test(value)
      ? { externalKey: value }
      : `${name} must match ^[A-Za-z0-9-]+$`;
  }
  return typeof value === 'string' && value.length >= 1 && value.length <= 255
    ? { tag: value }
    : `${name} must be a string of 1..255 characters`;
}

/**
 * Parses one record; a string is the reason it was refused. An observation is taken as
 * given however old (history), but not further ahead of `now` than a reader's clock may be
 * (DEFAULT_CLOCK_POLICY): late reads never move an asset back, so a record dated 2030 held
 * its asset at that place until 2030, whatever readers saw meanwhile.
 */
export function parseScanRecord(input: unknown, now = Date.now()): ScanRecord | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return 'record must be a JSON object';
  const obj = input as Record<string, unknown>;
  const known = new Set([
    'observed_at',
    'asset_id',
    'asset_external_key',
    'tag',
    'location_id',
    'location_external_key',
    'location_tag',
  ]);
  const unknown = Object.keys(obj).filter((k) => !known.has(k));
  if (unknown.length > 0) return `unknown field ${unknown[0]}`;
  if (typeof obj.observed_at !== 'string') return 'observed_at is required (RFC 3339)';
  const at = parseRfc3339(obj.observed_at);
  if (at === null) return 'observed_at must be an RFC 3339 timestamp';
  if (isSentinelInstant(at)) return 'observed_at must not be the zero instant or the Unix epoch';
  const latest = now + DEFAULT_CLOCK_POLICY.maxFutureSkewMs;
  if (at > latest) {
    // Both instants named: the bound alone, put where the clock's reading goes, read as a service clock 5 minutes fast.
    return `observed_at ${obj.observed_at} is in the future: at most ${DEFAULT_CLOCK_POLICY.maxFutureSkewMs / 60_000} minutes ahead of the service's clock (now ${toWire(now)}), so not after ${toWire(latest)}`;
  }
  const asset = ref(obj, ['asset_id', 'asset_external_key', 'tag'], 'asset');
  if (typeof asset === 'string') return asset;
  const location = ref(obj, ['location_id', 'location_external_key', 'location_tag'], 'location');
  if (typeof location === 'string') return location;
  return { observedAt: at, asset, location };
}
