/**
 * JSON values as clients send them (request variables, entry metadata), walked without recursion.
 * JSON.parse builds a value nested thousands deep without complaint, and every recursive walk after
 * it (JSON.stringify, GraphQL's coercion, the keys of shared answers and read budgets) then
 * overflows the stack: an "Unexpected error." for what is the client's mistake. So the depth is
 * found first, here, with a stack of our own, before anything else walks the value.
 */

/**
 * What a walk asks of each object key (`isKey`) and each string, number, boolean or null met (never
 * of an object or array): a problem to answer, or undefined when it passes.
 */
export type JsonVisitor = (scalar: unknown, isKey: boolean) => string | undefined;

/**
 * The first problem of `value`: objects and arrays nested more than `maxDepth` levels (`{}` and `[]`
 * are one level, `{"a": []}` two, a string none), or what `visit` answers for a key or scalar.
 * Undefined when there is none. Stops at the first problem, so a value a million levels deep costs
 * `maxDepth` steps; otherwise O(members).
 */
export function jsonProblem(value: unknown, maxDepth: number, visit?: JsonVisitor): string | undefined {
  if (typeof value !== 'object' || value === null) return visit?.(value, false);
  // Only objects and arrays wait on the stacks (each beside its level), scalars are visited as they
  // are met: the walk runs on every request's variables, so it allocates nothing per member.
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return `nests objects and arrays more than ${maxDepth} levels deep`;
    const isArray = Array.isArray(container);
    for (const key in container) {
      if (!isArray && visit) {
        const problem = visit(key, true);
        if (problem !== undefined) return problem;
      }
      const member = (container as Record<string, unknown>)[key];
      if (typeof member === 'object' && member !== null) {
        containers.push(member);
        depths.push(depth + 1);
      } else if (visit) {
        const problem = visit(member, false);
        if (problem !== undefined) return problem;
      }
    }
  }
  return undefined;
}
