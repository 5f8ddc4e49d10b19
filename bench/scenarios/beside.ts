/**
 * What the abuse scenarios share: a probe client measured alone and then beside an abusive
 * client, in one service process, each on the open loop's schedule; its rows; and the target the
 * probe is held to beside the abuse.
 */
import { type OpenMeasurement, type Stream, type WindowOptions, openLoop } from '../lib/load.js';
import type { Row, Target } from '../lib/report.js';
import type { RunOptions } from './common.js';

/** What an abusive client does beside the probe. */
export interface Abuse {
  /** Requests sent on a schedule beside the probe's, in the same open loop. Default: none. */
  streams?: Stream[];
  /** Called after the probe's baseline and before the measurement beside it, e.g. to open connections it holds. Default: none. */
  start?(): Promise<void>;
  /** Called after the measurement beside it, whatever happened (start may not have finished). Default: none. */
  stop?(): Promise<void>;
  /** Called when the measured window beside the probe opens and closes. Default: none. */
  window?: WindowOptions['window'];
}

export interface Beside {
  /** The probe alone (the baseline). */
  alone: OpenMeasurement;
  /** The probe beside the abuse. */
  probe: OpenMeasurement;
  /** The abuse's streams beside the probe, by name. */
  streams: Record<string, OpenMeasurement>;
}

/**
 * The probe stream alone, then the probe beside `abuse`, each for the run's warm-up and seconds,
 * against the service process `pid`.
 */
export async function probeAloneThenBeside(run: RunOptions, pid: number, probe: Stream, abuse: Abuse): Promise<Beside> {
  const measure = (streams: Stream[], window?: WindowOptions['window']) =>
    openLoop({ streams, warmupSeconds: run.warmup, seconds: run.seconds, watchPids: { server: pid }, ...(window ? { window } : {}) });
  const alone = await measure([probe]);
  try {
    await abuse.start?.();
    const beside = await measure([probe, ...(abuse.streams ?? [])], abuse.window);
    const { [probe.name]: probed, ...streams } = beside;
    return { alone: alone[probe.name]!, probe: probed!, streams };
  } finally {
    await abuse.stop?.();
  }
}

/** An open-loop measurement as a table row, its rate held as the headline. */
export function openRow(name: string, role: Row['role'], m: OpenMeasurement): Row {
  return { name, role, ...m, value: m.achievedRate, extra: { targetRate: m.targetRate, refused: m.errors, backlogAtEnd: m.backlogAtEnd } };
}

/** The probe's p99 beside the abuse under 50 ms, with no errors (issues 17 and 53). */
export function probeTarget(alone: OpenMeasurement, probe: OpenMeasurement, beside = 'the abusive client'): Target {
  return {
    description: `probe p99 beside ${beside} < 50 ms`,
    measured: `${probe.p99.toFixed(1)} ms, ${probe.errors} errors (alone: ${alone.p99.toFixed(1)} ms, ${alone.errors} errors)`,
    met: probe.requests > 0 && probe.p99 < 50 && probe.errors === 0,
  };
}
