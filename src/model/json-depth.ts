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
  // Two stacks side by side (each value, and the levels of objects and arrays around it), so that
  // the walk allocates no pair per member: it runs on every request's variables.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const item = values.pop();
    const depth = depths.pop()!;
    if (typeof item !== 'object' || item === null) {
      const problem = visit?.(item, false);
      if (problem !== undefined) return problem;
      continue;
    }
    if (depth >= maxDepth) return `nests objects and arrays more than ${maxDepth} levels deep`;
    if (Array.isArray(item)) {
      for (const member of item as unknown[]) {
        values.push(member);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in item) {
      const problem = visit?.(key, true);
      if (problem !== undefined) return problem;
      values.push((item as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return undefined;
}
