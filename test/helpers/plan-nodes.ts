/** The nodes of an EXPLAIN (FORMAT JSON) plan, for the plan tests. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Plan Rows': number;
  /** With ANALYZE: how often the node ran (0 for a node never executed). */
  'Actual Loops'?: number;
  /** With ANALYZE: rows the node returned, per loop. */
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** The plan's nodes, the root first, depth first. */
export const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/** The plan on one line, each node with its index: for an assertion's message. */
export const describePlan = (plan: PlanNode): string =>
  nodesOf(plan)
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`)
    .join(' > ');
