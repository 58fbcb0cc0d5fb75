/** A node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan, with what the plan tests read of it. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The node and every node below it. */
export const planNodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(planNodes)];

/**
 * Rows of `relation` the plan read: those its scans returned and those their filters and
 * rechecks threw away, over every loop.
 */
export const rowsRead = (plan: PlanNode, relation: string): number =>
  planNodes(plan)
    .filter((n) => n['Relation Name'] === relation)
    .reduce(
      (sum, n) =>
        sum +
        (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) *
          n['Actual Loops'],
      0,
    );

/** Rows every node of the plan produced or threw away (filters, join filters), over all its loops. */
export const rowsHandled = (plan: PlanNode): number =>
  planNodes(plan).reduce(
    (sum, n) =>
      sum +
      (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Join Filter'] ?? 0)) *
        n['Actual Loops'],
    0,
  );
