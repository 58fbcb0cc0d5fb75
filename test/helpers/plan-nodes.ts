/**
 * The nodes of an EXPLAIN (FORMAT JSON) plan, with what the plan tests read of them; the
 * Actual and Removed fields come with ANALYZE.
 */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Plan Rows': number;
  /** How often the node ran (0 for a node never executed). */
  'Actual Loops'?: number;
  /** Rows the node returned, per loop. */
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The root node of what `EXPLAIN (FORMAT JSON) …` answered (its rows, as the driver gives them). */
export const explainedRoot = <P = PlanNode>(rows: unknown[]): P =>
  (rows[0] as { 'QUERY PLAN': { Plan: P }[] })['QUERY PLAN'][0]!.Plan;

/** The plan's nodes, the root first, depth first. */
export const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/** The plan on one line, each node with its index and relation: for an assertion's message. */
export const describePlan = (plan: PlanNode): string =>
  nodesOf(plan)
    .map(
      (n) =>
        `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`,
    )
    .join(' > ');

/** A node's rows over all its loops, with those `removed` lists as thrown away. */
const handled = (n: PlanNode, removed: Array<keyof PlanNode>): number =>
  ((n['Actual Rows'] ?? 0) +
    removed.reduce((sum, field) => sum + ((n[field] as number | undefined) ?? 0), 0)) *
  (n['Actual Loops'] ?? 0);

/**
 * Rows of `relation` the plan read: those its scans returned and those their filters and
 * rechecks threw away, over every loop.
 */
export const rowsRead = (plan: PlanNode, relation: string): number =>
  nodesOf(plan)
    .filter((n) => n['Relation Name'] === relation)
    .reduce((sum, n) => sum + handled(n, ['Rows Removed by Filter', 'Rows Removed by Index Recheck']), 0);

/** Rows every node of the plan produced or threw away (filters, join filters), over all its loops. */
export const rowsHandled = (plan: PlanNode): number =>
  nodesOf(plan).reduce(
    (sum, n) => sum + handled(n, ['Rows Removed by Filter', 'Rows Removed by Join Filter']),
    0,
  );
