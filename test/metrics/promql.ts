import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

/** One series a query selects, with the labels it matches on and the function over its range. */
export interface Selection {
  name: string;
  labels: string[];
  /** `rate`, `increase`, `max_over_time`, … when the series is selected over a range. */
  rangeFunction?: string;
}

/** What a PromQL expression uses, read from Prometheus' own grammar (@prometheus-io/lezer-promql). */
export interface PromqlUse {
  /** The source text of every part the grammar could not read; empty when it parses. */
  errors: string[];
  selections: Selection[];
  /** Labels of `by (…)` and `without (…)`. */
  grouping: string[];
}

const text = (expr: string, node: SyntaxNode) => expr.slice(node.from, node.to);

/** The function a range selector is the argument of (its FunctionCall two levels up). */
function rangeFunctionOf(expr: string, matrix: SyntaxNode): string | undefined {
  const call = matrix.parent?.parent;
  if (call?.name !== 'FunctionCall') return undefined;
  const identifier = call.getChild('FunctionIdentifier');
  return identifier ? text(expr, identifier) : undefined;
}

export function promqlUse(expr: string): PromqlUse {
  const use: PromqlUse = { errors: [], selections: [], grouping: [] };
  parser.parse(expr).iterate({
    enter(ref) {
      const node = ref.node;
      if (ref.type.isError) use.errors.push(`${text(expr, node)} at ${ref.from}`);
      if (ref.name === 'VectorSelector') {
        const identifier = node.getChild('Identifier');
        const labels = node
          .getChild('LabelMatchers')
          ?.getChildren('UnquotedLabelMatcher')
          .map((m) => text(expr, m.getChild('LabelName')!));
        const matrix = node.parent?.name === 'MatrixSelector' ? node.parent : undefined;
        use.selections.push({
          name: identifier ? text(expr, identifier) : '',
          labels: labels ?? [],
          rangeFunction: matrix ? rangeFunctionOf(expr, matrix) : undefined,
        });
      }
      if (ref.name === 'GroupingLabels') {
        use.grouping.push(...node.getChildren('LabelName').map((n) => text(expr, n)));
      }
    },
  });
  return use;
}
