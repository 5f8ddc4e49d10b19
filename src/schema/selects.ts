import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';
import type { StandingNeeds } from './recorded-fields.js';

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

/**
 * How many of the operation's root fields are named one of `names`, through fragments too: whether
 * a read has company in its request worth gathering with (see place-reads.ts). O(root selections).
 */
export function rootFieldsNamed(info: GraphQLResolveInfo, names: ReadonlySet<string>): number {
  const count = (set: SelectionSetNode | undefined): number =>
    (set?.selections ?? []).reduce((sum, selection) => {
      if (selection.kind === Kind.FIELD) return sum + (names.has(selection.name.value) ? 1 : 0);
      if (selection.kind === Kind.INLINE_FRAGMENT) return sum + count(selection.selectionSet);
      return sum + count(info.fragments[selection.name.value]?.selectionSet);
    }, 0);
  return count(info.operation.selectionSet);
}

/** What the standings at `path` under the field being resolved may be asked for (none: the field's own value is the Standing list). */
export function standingNeeds(info: GraphQLResolveInfo, ...path: string[]): StandingNeeds {
  const metadata = selectsField(info, ...path, 'metadata');
  return { recorded: metadata || selectsField(info, ...path, 'achievedAt'), metadata, player: selectsField(info, ...path, 'player') };
}
