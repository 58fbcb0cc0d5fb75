import { describe, expect, it } from 'vitest';
import { READ_ONLY_FIELDS, readOnlyRules } from './rules.js';
import type { Asset } from './schemas.js';

describe('READ_ONLY_FIELDS', () => {
  it('names exactly the fields readOnlyRules compares, so a PATCH without them has nothing to check', () => {
    const asset = {
      id: 1,
      external_key: 'ASSET-0001',
      name: 'Pump',
      description: null,
      is_active: true,
      metadata: {},
      location_id: null,
      location_external_key: null,
      tags: [],
      valid_from: '2026-01-01T00:00:00.000Z',
      valid_to: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      deleted_at: null,
    } satisfies Asset;
    expect(readOnlyRules(asset).map((r) => r.field)).toEqual([...READ_ONLY_FIELDS]);
  });
});
