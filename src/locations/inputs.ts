import type { ParentFields } from './parent.js';
import type { Page } from './repository-tree.js';

/** What the location service takes from a route's validated body or query. */
export interface LocationCreateInput extends ParentFields {
  name: string;
  external_key?: string;
  description?: string | null;
  is_active?: boolean;
  tags?: { tag_type: string; value: string }[] | null;
  valid_from?: string;
  valid_to?: string | null;
}

export interface LocationUpdateInput extends ParentFields {
  name?: string;
  description?: string | null;
  is_active?: boolean;
  valid_from?: string;
  valid_to?: string | null;
  // Read-only echoes: compared with the current values, never applied.
  id?: number;
  created_at?: string;
  updated_at?: string;
  deleted_at?: string | null;
  external_key?: string;
  tags?: unknown[] | null;
}

export interface LocationListInput extends Page {
  parent_id?: number[];
  parent_external_key?: string[];
  external_key?: string[];
  is_active?: boolean;
  include_deleted?: boolean;
  q?: string;
  sort?: string;
}
