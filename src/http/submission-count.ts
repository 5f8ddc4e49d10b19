import { type ExecutionResult, Kind, type OperationDefinitionNode, type ValueNode } from 'graphql';

/** How many results a submission operation carries: 1 per submitScore, the list's length per submitScores. */
export function submissionsIn(operation: OperationDefinitionNode, variables: Record<string, unknown> | null | undefined): number {
  let count = 0;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    if (selection.name.value === 'submitScore') count += 1;
    if (selection.name.value === 'submitScores') {
      const inputs = selection.arguments?.find((arg) => arg.name.value === 'inputs')?.value;
      count += listLength(inputs, variables);
    }
  }
  return count;
}

function listLength(value: ValueNode | undefined, variables: Record<string, unknown> | null | undefined): number {
  if (value?.kind === Kind.LIST) return value.values.length;
  if (value?.kind === Kind.VARIABLE) {
    const bound = variables?.[value.name.value];
    return Array.isArray(bound) ? bound.length : 1;
  }
  return 1;
}

/** The duplicate flags of every submission a result answers, in order. */
export function duplicatesIn(result: ExecutionResult): boolean[] {
  const flags: boolean[] = [];
  for (const value of Object.values(result.data ?? {})) {
    for (const payload of (Array.isArray(value) ? value : [value]) as unknown[]) {
      if (payload && typeof payload === 'object' && 'duplicate' in payload) flags.push(payload.duplicate === true);
    }
  }
  return flags;
}
