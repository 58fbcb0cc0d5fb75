import type { TreeNode } from '../api.js';

/** Shapes of the /internal/ location endpoints (docs/web-app.md), the API's where shared. */

export interface Tag {
  id: number;
  tag_type: string;
  value: string;
}

/** The public API's Location read shape. */
export interface LocationRecord {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  parent_id: number | null;
  parent_external_key: string | null;
  tags: Tag[];
  valid_from: string;
  valid_to: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface PathStep {
  id: number;
  external_key: string;
  name: string;
}

export interface LocationDetails {
  data: LocationRecord;
  /** Live descendants at any depth: what a rename reports as affected. */
  descendant_count: number;
  /** Ancestors, root first. */
  path: PathStep[];
}

export interface TreeHit extends TreeNode {
  path: string[];
}

export interface AssetHere {
  id: number;
  external_key: string;
  name: string;
  last_seen_at: string | null;
}

/** An RFC 3339 instant as a `datetime-local` value in the browser's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A `datetime-local` value (the browser's time zone) as RFC 3339 UTC; '' stays ''. */
export function fromLocalInput(value: string): string {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}
