import { type DocumentNode, GraphQLError, OperationTypeNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../resolvers/context.js';
import type { RateLimits } from './rate-limits.js';

/**
 * Every query and subscription spends one read from its client's budget before it runs; a client
 * over its budget gets RATE_LIMITED and costs the stores nothing. Mutations are limited per API key
 * where they are handled (submissions count each result).
 */
export function useReadRateLimit(limits: RateLimits): Plugin {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document as DocumentNode, args.operationName as string | undefined);
      if (operation?.operation === OperationTypeNode.MUTATION) return;
      try {
        await limits.read((args.contextValue as unknown as Context).client);
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        setResultAndStopExecution({ errors: [error] });
      }
    },
  };
}
