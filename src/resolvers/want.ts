import { type FieldNode, type GraphQLResolveInfo, Kind, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Want } from '../reads/read-side.js';

/**
 * Whether the field being resolved selects the field at `path` (one name: a field it selects
 * directly; more: nested, e.g. 'edges', 'node', 'metadata'), through fragments too, whatever their
 * directives say: an answer to "might it be asked for", for a prefetch. O(selection size).
 */
export function selectsField(info: GraphQLResolveInfo, ...path: string[]): boolean {
  const within = (set: SelectionSetNode | undefined, [name, ...rest]: string[]): boolean =>
    (set?.selections ?? []).some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name && (rest.length === 0 || within(selection.selectionSet, rest));
      if (selection.kind === Kind.INLINE_FRAGMENT) return within(selection.selectionSet, [name!, ...rest]);
      return within(info.fragments[selection.name.value]?.selectionSet, [name!, ...rest]);
    });
  return info.fieldNodes.some((node) => within(node.selectionSet, path));
}

/** The root fields whose answers name players (through their standings). */
const NAMING_READS = new Set(['standing', 'around', 'top', 'friends', 'standings', 'seasonResults']);

/** How many of the operation's root fields name players, through fragments too. O(root selections). */
function namingRootFields(info: GraphQLResolveInfo): number {
  const count = (set: SelectionSetNode | undefined): number =>
    (set?.selections ?? []).reduce((sum, selection) => {
      if (selection.kind === Kind.FIELD) return sum + (NAMING_READS.has(selection.name.value) ? 1 : 0);
      if (selection.kind === Kind.INLINE_FRAGMENT) return sum + count(selection.selectionSet);
      return sum + count(info.fragments[selection.name.value]?.selectionSet);
    }, 0);
  return count(info.operation.selectionSet);
}

/** Wants worked out before, per operation, field node and path(s): they depend on the document alone, and a client repeats its documents. */
const known = new WeakMap<OperationDefinitionNode, WeakMap<FieldNode, Map<string, Want>>>();

/**
 * What the read being resolved wants of the standings it answers (the read side's Want), from its
 * selection: `path` leads from the field to the standings (none: the field's own value is the
 * Standing or the list of them; 'entries' for a top, 'edges', 'node' for a page). Each is true
 * whenever the selection may ask for it (selectsField: directives not weighed). Worked out once per
 * field of a document: it depends on what the document selects, never on how it is written (its
 * operation's name, its variables' names). O(1) for a field met before.
 */
export function wantOf(info: GraphQLResolveInfo, ...path: string[]): Want {
  return wantOfAny(info, [path]);
}

/**
 * {@link wantOf} for a field whose standings are reached by several paths (Query.league: its
 * `standing`, and its cohort's `entries`, the same objects): what any of them selects is wanted.
 */
export function wantOfAny(info: GraphQLResolveInfo, paths: readonly (readonly string[])[]): Want {
  const [node] = info.fieldNodes;
  const cached = info.fieldNodes.length === 1 && node !== undefined;
  const key = paths.map((path) => path.join('.')).join('|');
  let byField = cached ? known.get(info.operation) : undefined;
  let byPath = byField?.get(node!);
  const found = byPath?.get(key);
  if (found) return found;
  const asks = (name: string) => paths.some((path) => selectsField(info, ...path, name));
  const want: Want = { player: asks('player'), achievedAt: asks('achievedAt'), metadata: asks('metadata'), withOthers: namingRootFields(info) > 1 };
  if (cached) {
    if (!byField) known.set(info.operation, (byField = new WeakMap()));
    if (!byPath) byField.set(node, (byPath = new Map<string, Want>()));
    byPath.set(key, want);
  }
  return want;
}
