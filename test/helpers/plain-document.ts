import { type DocumentNode, type FieldNode, type FragmentDefinitionNode, Kind, type SelectionSetNode, parse, print } from 'graphql';

/**
 * The same operation written without fragments, as a person writes it by hand: every fragment
 * spread and inline fragment replaced by the fields it selects (merged by response key), no
 * `__typename`. What the service answers it is the oracle for what it must answer the fragment
 * documents generated clients send.
 */
export function withoutFragments(document: DocumentNode | string): string {
  const parsed = typeof document === 'string' ? parse(document) : document;
  const fragments = new Map(parsed.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const flatten = (sets: readonly SelectionSetNode[]): SelectionSetNode => {
    const byKey = new Map<string, { field: FieldNode; sub: SelectionSetNode[] }>();
    const add = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FRAGMENT_SPREAD) add(fragments.get(selection.name.value)!.selectionSet);
        else if (selection.kind === Kind.INLINE_FRAGMENT) add(selection.selectionSet);
        else if (selection.name.value !== '__typename') {
          const key = selection.alias?.value ?? selection.name.value;
          const held = byKey.get(key) ?? { field: selection, sub: [] };
          if (selection.selectionSet) held.sub.push(selection.selectionSet);
          byKey.set(key, held);
        }
      }
    };
    for (const set of sets) add(set);
    return {
      kind: Kind.SELECTION_SET,
      selections: [...byKey.values()].map(({ field, sub }) => (sub.length ? { ...field, selectionSet: flatten(sub) } : field)),
    };
  };
  const operations = parsed.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).map((d) => ({ ...d, selectionSet: flatten([d.selectionSet]) }));
  return print({ kind: Kind.DOCUMENT, definitions: operations });
}

/** A value with every `__typename` taken out, as the plain document's answer has none. */
export function withoutTypenames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTypenames);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== '__typename')
        .map(([key, v]) => [key, withoutTypenames(v)]),
    );
  }
  return value;
}
