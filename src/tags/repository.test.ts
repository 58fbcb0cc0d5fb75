import { describe, expect, it } from 'vitest';
import type { Tx } from '../db/pool.js';
import { NAMED_OWNERS_MAX, tagsForOwners } from './repository.js';

/** The statement tagsForOwners sends for `n` owners. */
async function sent(n: number): Promise<{ name?: string; text: string }> {
  let config: { name?: string; text: string } | undefined;
  const tx = {
    query: async (q: { name?: string; text: string }) => {
      config = q;
      return { rows: [] };
    },
  } as unknown as Tx;
  await tagsForOwners(
    tx,
    1,
    'asset',
    Array.from({ length: n }, (_, i) => i + 1),
  );
  return config!;
}

describe('tagsForOwners', () => {
  it('asks for one owner by equality, a kept plan of its own', async () => {
    const one = await sent(1);
    expect(one.name).toMatch(/^tt_/);
    expect(one.text).toContain('asset_id = $2');
    expect(one.text).not.toContain('ANY');
  });

  it('keeps a plan for a page of owners', async () => {
    expect((await sent(1)).name).toMatch(/^tt_/);
    expect((await sent(NAMED_OWNERS_MAX)).name).toMatch(/^tt_/);
  });

  it('plans a larger set of owners for its own ids', async () => {
    const big = await sent(NAMED_OWNERS_MAX + 1);
    expect(big.name).toBeUndefined();
    expect(big.text).toBe((await sent(2)).text);
  });
});
