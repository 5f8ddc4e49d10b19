import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';

/**
 * Checks a field's authScopes before its arguments are validated. Pothos runs argument mappers (the
 * validation plugin's checks) ahead of every resolver wrapper, scope-auth's included, so without
 * this an anonymous caller sending a bad input would be told BAD_USER_INPUT, and so what the
 * service would refuse, before UNAUTHENTICATED. Scope-auth still runs its own check afterwards (its
 * scope results are cached per request, so the second costs nothing).
 */
export class AuthBeforeInputPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapArgMappers(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const scopes = (fieldConfig.pothosOptions as { authScopes?: unknown }).authScopes;
    // Only fixed scope maps: a scope function may need the validated arguments.
    if (!scopes || typeof scopes === 'function' || fieldConfig.argMappers.length === 0) return resolver;
    const unauthorized = this.builder.options.scopeAuth.unauthorizedError;
    return async (parent, args, context, info) => {
      await this.builder.runAuthScopes(context, scopes as never, (result) =>
        unauthorized ? unauthorized(parent as never, context, info, result) : result.message,
      );
      return resolver(parent, args, context, info);
    };
  }
}

declare global {
  // Pothos registers plugins by augmenting its global namespace.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      authBeforeInput: AuthBeforeInputPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('authBeforeInput', AuthBeforeInputPlugin);
