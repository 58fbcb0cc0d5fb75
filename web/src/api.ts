/**
 * The one way the app talks to the service: JSON to and from `/internal/`, with the
 * session's CSRF token on every state-changing call, and the error envelope turned into
 * messages a form can show next to itself.
 */

import { noteServedBuild, WEB_BUILD_HEADER } from './build.js';

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

interface ErrorEnvelope {
  error?: { type?: string; title?: string; status?: number; detail?: string; fields?: FieldError[] };
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly fields: FieldError[];
  /** Retry-After of a 429 or 503, in seconds: when asking again can succeed; null without one. */
  readonly retryAfterSeconds: number | null;

  constructor(
    status: number,
    type: string,
    detail: string,
    fields: FieldError[] = [],
    retryAfterSeconds: number | null = null,
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.fields = fields;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The lines to show: the detail, then every field message not already in it. */
  get messages(): string[] {
    const lines = [this.message];
    for (const f of this.fields)
      if (!this.message.includes(f.message)) lines.push(`${f.field}: ${f.message}`);
    return lines;
  }
}

/** A readable message for anything a call can throw. */
export function messagesOf(error: unknown): string[] {
  if (error instanceof ApiError) return error.messages;
  if (error instanceof Error) return [error.message];
  return [String(error)];
}

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a signed-in call answers 401: the session ended (signed out elsewhere, expired). */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function toError(res: Response): Promise<ApiError> {
  let body: ErrorEnvelope = {};
  try {
    body = (await res.json()) as ErrorEnvelope;
  } catch {
    // Not JSON (a proxy's error page): fall back to the status line.
  }
  const e = body.error ?? {};
  const detail = e.detail || e.title || `${res.status} ${res.statusText || 'error'}`;
  // The service sends whole seconds; an HTTP date (a proxy's) is not worth a parser here.
  const retryAfter = /^\d+$/.exec(res.headers.get('retry-after')?.trim() ?? '');
  return new ApiError(
    res.status,
    e.type ?? 'error',
    detail,
    Array.isArray(e.fields) ? e.fields : [],
    retryAfter ? Number(retryAfter[0]) : null,
  );
}

export interface ApiOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Query;
  /** Sign-in and the session probe handle 401 themselves. */
  expectUnauthorized?: boolean;
}

export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') {
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
    // PATCH bodies are JSON merge patches, as on the public API (the same services answer).
    if (method === 'POST') headers['content-type'] = 'application/json';
    if (method === 'PATCH') headers['content-type'] = 'application/merge-patch+json';
  }
  let res: Response;
  try {
    res = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: method === 'POST' || method === 'PATCH' ? JSON.stringify(options.body ?? {}) : undefined,
    });
  } catch {
    throw new ApiError(0, 'network', 'The service could not be reached. Check the connection and try again.');
  }
  noteServedBuild(res.headers.get(WEB_BUILD_HEADER));
  if (!res.ok) {
    const error = await toError(res);
    if (res.status === 401 && !options.expectUnauthorized) onUnauthorized?.();
    throw error;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export interface Page<T> {
  data: T[];
  limit: number;
  offset: number;
  total_count: number;
}

/** GET /internal/auth/sign-up-state: a fresh install has no user yet. */
export interface SignUpState {
  has_users: boolean;
  sign_up_open: boolean;
}

/** What a person may do (docs/web-app.md "Roles and members"); each includes the ones before it. */
export type Role = 'viewer' | 'editor' | 'admin';

export interface Session {
  user: { id: number | string; email: string; role: Role };
  organization: { id: number; name: string };
  csrf_token: string;
  expires_at: string;
  /** The organization requires two-factor sign-in and this person must set it up first. */
  totp_enrolment_required: boolean;
}

export type KeyStatus = 'active' | 'expired' | 'revoked';

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  status: KeyStatus;
  /** Who minted it (null: an operator, through the CLI); `removed` once they left. */
  created_by: { id: number; email: string; removed: boolean } | null;
}

/** A person of the organization (GET /internal/members). */
export interface Member {
  id: number;
  email: string;
  role: Role;
  created_at: string;
  /** Has two-factor sign-in on (an admin can reset it). */
  two_factor: boolean;
}

export interface Invitation {
  id: number;
  email: string;
  role: Role;
  invited_by: string | null;
  created_at: string;
  sent_at: string;
  expires_at: string;
  status: 'pending' | 'expired';
}

/** An invitation as made or resent: the link is in this answer only. */
export interface IssuedInvitation {
  data: Invitation;
  token: string;
  url: string;
  /** Mailed as well (the service has an SMTP setting); `email_error` says why not when it failed. */
  emailed: boolean;
  email_error?: string;
}

/** What an invitation link invites to (POST /internal/invitations/lookup). */
export interface InvitationPreview {
  email: string;
  role: Role;
  organization: { id: number; name: string };
  expires_at: string;
}

export interface ScanPoint {
  id: number;
  antenna: number | null;
  location_id: number;
  location_external_key: string | null;
  location_name: string | null;
}

export interface Reader {
  id: number;
  name: string;
  family: string;
  identity: string;
  topic: string;
  webhook: boolean;
  /** Its user name on the MQTT broker. */
  mqtt_username: string;
  /** false once its MQTT credentials are revoked. */
  mqtt_credentials: boolean;
  created_at: string;
  last_message_at: string | null;
  good_reads: number;
  bad_reads: number;
  unknown_reads: number;
  health: ReaderHealth;
  scan_points: ScanPoint[];
}

/** How a reader is doing now (docs/metrics.md, "Per-reader health"). */
export interface ReaderHealth {
  /** Logged in to the embedded broker now; null with an external broker (not known). */
  connected: boolean | null;
  /** Reads in the last 60 seconds. */
  reads_per_minute: number;
  /** Refused (bad) reads in the last 60 seconds. */
  errors_per_minute: number;
  last_error_at: string | null;
}

export interface TreeNode {
  id: number;
  external_key: string;
  name: string;
  child_count: number;
  asset_count: number;
}

export interface LocationOption {
  id: number;
  external_key: string;
  name: string;
  /** Ancestors' names, root first (the picker's list has them). */
  path?: string[];
  /** Ancestors' ids, root first (the picker's list has them). */
  path_ids?: number[];
}

export interface AssetRow {
  id: number;
  external_key: string;
  name: string;
  location_id: number | null;
  location_external_key: string | null;
  location_name: string | null;
  last_seen_at: string | null;
}

export interface HistoryRow {
  event_observed_at: string;
  location_id: number | null;
  location_external_key: string | null;
  location_name: string | null;
  duration_seconds: number;
  /** The newest stay, still going on. */
  current: boolean;
}

export type TagType = 'rfid' | 'ble' | 'barcode';

export interface Tag {
  id: number;
  tag_type: string;
  value: string;
}

/** The public API's Asset read shape. */
export interface Asset {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  location_id: number | null;
  location_external_key: string | null;
  tags: Tag[];
  valid_from: string;
  valid_to: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface AssetDetail extends Asset {
  location_name: string | null;
  location_path: LocationOption[];
  located_since: string | null;
  last_seen_at: string | null;
}

export interface ReportRow {
  asset_id: number;
  asset_external_key: string;
  asset_name: string | null;
  asset_last_seen: string;
  asset_deleted_at: string | null;
  location_id: number | null;
  location_external_key: string | null;
  location_name: string | null;
}

export interface HandheldResult {
  applied: number;
  unknown: number;
  errors: unknown[];
  /** The items that match no asset, as scanned. */
  unknown_items: string[];
}

/** GET /internal/readers/{id}/problems: messages with bad reads or unknown tags, newest first. */
export interface ReaderProblems {
  data: Array<{
    received_at: string;
    bad_reads: number;
    unknown_reads: number;
    errors: string[];
    payload: string;
    payload_truncated: boolean;
  }>;
  last_problem_at: string | null;
  /** Tags of those messages that match no asset now, newest first, one entry per tag. */
  unknown_tags: Array<{
    tag_type: string;
    value: string;
    antenna: number | null;
    seen_at: string;
    reads: number;
  }>;
  /** Their refused reads with the error, newest first. */
  read_errors: Array<{ received_at: string; message: string }>;
}
