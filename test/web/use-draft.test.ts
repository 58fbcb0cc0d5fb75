import { describe, expect, it } from 'vitest';
import { type DraftState, settleDraft } from '../../web/src/components/use-draft.js';

/** An edit form's draft against newer versions of its record (useDraft's rules). */
describe('web app edit drafts (useDraft)', () => {
  interface Rec {
    updated_at: string;
    name: string;
    description: string;
    tags: string[];
  }
  interface Fields {
    name: string;
    description: string;
  }
  const fields = (() => {
    // The hook answers the same object for the same record; so does this.
    const cache = new WeakMap<Rec, Fields>();
    return (r: Rec) => {
      const f = cache.get(r) ?? { name: r.name, description: r.description };
      cache.set(r, f);
      return f;
    };
  })();
  const comparable = (d: Fields) => ({ ...d });
  const v1: Rec = { updated_at: '1', name: 'Bay', description: '', tags: [] };
  const settle = (s: DraftState<Rec, Fields>, current: Rec) => settleDraft(s, current, fields, comparable);
  const typed = (draft: Partial<Fields>): DraftState<Rec, Fields> => ({
    base: v1,
    draft: { ...fields(v1), ...draft },
  });

  it('the same version: the draft stays as typed', () => {
    const s = typed({ name: 'Bay 1' });
    expect(settle(s, { ...v1 })).toEqual({ state: s, conflict: [] });
  });

  it('a change outside the form (a tag attached): the draft stays, on the new version', () => {
    const v2 = { ...v1, updated_at: '2', tags: ['E200'] };
    const s = typed({ name: 'Bay 1' });
    expect(settle(s, v2)).toEqual({
      state: { base: v2, draft: { name: 'Bay 1', description: '' } },
      conflict: [],
    });
  });

  it('nothing typed: the form follows the new version', () => {
    const v2 = { ...v1, updated_at: '2', name: 'Bay 2' };
    const settled = settle(typed({}), v2);
    expect(settled.conflict).toEqual([]);
    expect(settled.state.base).toBe(v2);
    expect(settled.state.draft).toBe(fields(v2));
  });

  it('the same edit made elsewhere: no conflict', () => {
    const v2 = { ...v1, updated_at: '2', name: 'Bay 1' };
    expect(settle(typed({ name: 'Bay 1' }), v2)).toEqual({
      state: { base: v2, draft: fields(v2) },
      conflict: [],
    });
  });

  it('a field changed elsewhere while this draft differs: the draft is kept, the fields they changed listed', () => {
    const v2 = { ...v1, updated_at: '2', description: 'loading bay' };
    const s = typed({ name: 'Bay 1' });
    const settled = settle(s, v2);
    expect(settled.state).toBe(s);
    expect(settled.conflict).toEqual(['description']);
  });
});
