import { inlineParameters } from '../../src/db/opening.js';
import type { Tx } from '../../src/db/pool.js';
import { explainedRoot } from './plan-nodes.js';

/**
 * EXPLAIN (FORMAT JSON) of the generic plan PostgreSQL may settle on for a named statement
 * (src/db/prepared.ts): the text prepared as SQL and explained under force_generic_plan, so
 * no parameter's value is known to the planner. Returns the plan's root node.
 */
export async function explainGeneric<P>(tx: Tx, text: string, values: readonly unknown[]): Promise<P> {
  const args = inlineParameters(values.map((_, i) => `$${i + 1}`).join(', '), values);
  if (args === undefined) throw new Error('parameters that cannot be written as literals');
  await tx.query(`PREPARE generic_plan_probe AS ${text}`);
  try {
    await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
    const { rows } = await tx.query(`EXPLAIN (FORMAT JSON) EXECUTE generic_plan_probe(${args})`);
    return explainedRoot<P>(rows);
  } finally {
    await tx.query('DEALLOCATE generic_plan_probe');
  }
}
