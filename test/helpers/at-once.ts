import { createClient } from 'graphql-ws';
import { expect } from 'vitest';
import { WebSocket } from 'ws';

/**
 * Sends `query` once for each of `variables`, all at once on one graphql-ws socket (as a busy game
 * server's or an overlay's requests arrive), and answers each one's data, in order; every answer
 * must come without errors. The socket is closed before it returns. `key`: the API key the socket
 * connects with (default: none, an anonymous caller).
 */
export async function sentAtOnce<T>(url: string, query: string, variables: Record<string, unknown>[], key?: string): Promise<T[]> {
  const connectionParams = key === undefined ? undefined : { authorization: `Bearer ${key}` };
  const client = createClient({ url: `${url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams });
  try {
    return await Promise.all(
      variables.map(async (each) => {
        for await (const result of client.iterate<T>({ query, variables: each })) {
          expect(result.errors).toBeUndefined();
          return result.data!;
        }
        throw new Error('graphql-ws answered nothing');
      }),
    );
  } finally {
    await client.dispose();
  }
}
