/**
 * One abusive client beside an ordinary one (issue 17): the service with its default per-client
 * budgets (200 reads and 10,000 rows a second), an abusive client sending the heaviest operation
 * the limits allow (4,999 rows: a 1,000-row standings page with cursors and names, and a top of
 * 998 with names) at twice what its budget lets through, so it always holds its full budget; and
 * a probe client reading the top entry of the board (what a game shows) on a fixed schedule. The
 * probe's latency alone, in the same service process just before, is the baseline. The abusive
 * client connects from 127.0.0.2, another client address to the service.
 */
import { httpGraphql, graphqlBody } from '../lib/clients.js';
import { BOARD_ID } from '../lib/env.js';
import type { Stream } from '../lib/load.js';
import type { Report, Target } from '../lib/report.js';
import { openRow, probeAloneThenBeside, probeTarget } from './beside.js';
import { type RunOptions, withService } from './common.js';

/** The service's defaults (src/services/rate-limits.ts), set explicitly over the bench's "no budgets". */
const BUDGETS = { RATE_LIMIT_READS_PER_SECOND: '200', RATE_LIMIT_READ_ROWS_PER_SECOND: '10000' };
const ROWS_PER_SECOND = 10_000;

/** 1 + 1,000 × 3 + 1 rows for the page, 1 + 998 × 2 for the top: 4,999, just under MAX_OPERATION_ROWS. */
const HEAVIEST = `query Heaviest($board: ID!) {
  page: standings(board: $board, first: 1000) { edges { cursor node { rank score achievedAt player { id displayName } } } pageInfo { endCursor hasNextPage } }
  top(board: $board, limit: 998) { entries { rank score player { id displayName } } }
}`;
const HEAVIEST_ROWS = 4_999;
const PROBE = 'query Leader($board: ID!) { top(board: $board, limit: 1) { entries { rank score player { displayName } } } }';
const PROBE_RATE = 50;

export async function runAbuse(run: RunOptions): Promise<Report> {
  const abusiveRate = (2 * ROWS_PER_SECOND) / HEAVIEST_ROWS;
  const figures = await withService({ runtime: run.runtime, env: BUDGETS }, async (service) => {
    const probe = httpGraphql(service.url, 4);
    const abuser = httpGraphql(service.url, 8, {}, { localAddress: '127.0.0.2' });
    const probeBody = graphqlBody(PROBE);
    const heavyBody = graphqlBody(HEAVIEST);
    const probeStream: Stream = { name: 'probe', rate: PROBE_RATE, operation: () => probe.post(probeBody({ board: BOARD_ID })) };
    const abusive: Stream = { name: 'abuser', rate: abusiveRate, operation: () => abuser.post(heavyBody({ board: BOARD_ID })) };
    try {
      const { alone, probe: probed, streams } = await probeAloneThenBeside(run, service.pid, probeStream, { streams: [abusive] });
      return { alone, probe: probed, abuser: streams.abuser! };
    } finally {
      await probe.close();
      await abuser.close();
    }
  });
  const { alone, probe, abuser } = figures;
  const targets: Target[] = [
    probeTarget(alone, probe),
    {
      description: `the abusive client is held to its rows budget (${ROWS_PER_SECOND.toLocaleString('en-US')} a second)`,
      measured: `${(abuser.requests / run.seconds).toFixed(2)} heaviest reads a second answered (${Math.round((abuser.requests * HEAVIEST_ROWS) / run.seconds).toLocaleString('en-US')} rows/s), ${abuser.errors} refused`,
      met: (abuser.requests * HEAVIEST_ROWS) / run.seconds <= ROWS_PER_SECOND * 1.1,
    },
  ];
  return {
    scenario: 'abuse',
    params: { seconds: run.seconds, warmup: run.warmup, runtime: run.runtime, probeRate: PROBE_RATE, abusiveRate: Math.round(abusiveRate * 100) / 100 },
    rows: [
      openRow(`probe top(limit: 1) at ${PROBE_RATE}/s beside the abusive client`, 'service', probe),
      openRow(`abusive client: ${HEAVIEST_ROWS.toLocaleString('en-US')}-row reads at ${abusiveRate.toFixed(1)}/s (twice its budget)`, 'service', abuser),
      openRow(`probe top(limit: 1) at ${PROBE_RATE}/s alone (baseline, same process)`, 'baseline', alone),
    ],
    targets,
    notes: ['open loop; the abusive client connects from 127.0.0.2, the probe from 127.0.0.1; refused = RATE_LIMITED answers'],
  };
}
