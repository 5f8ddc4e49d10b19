/**
 * Whether submissions commit lately, as the write path itself sees it: PostgreSQL may accept a
 * connection and answer `select 1` while no group of submissions can commit (a lock held by a
 * wedged session, a disk that stalls writes). /readyz reports the write path unready from a failed
 * group until one commits, or until `windowMs` passes with no new failure: then it is ready again
 * by itself, so that a process its load balancer took out of rotation (and so sends no
 * submissions) is tried again.
 */
export interface SubmissionHealth {
  /** A group committed. */
  committed(): void;
  /** A group failed as a whole: nothing of it was recorded. */
  failed(error: unknown): void;
  /** Why submissions cannot commit now, or null when, as far as the latest groups tell, they can. */
  problem(): string | null;
}

export interface SubmissionHealthOptions {
  /** How long a failed group keeps the write path unready when nothing commits after it. Default 5,000 ms. */
  windowMs?: number;
  /** The monotonic clock, in milliseconds. Default performance.now. */
  now?: () => number;
}

export function createSubmissionHealth(options: SubmissionHealthOptions = {}): SubmissionHealth {
  const windowMs = options.windowMs ?? 5_000;
  const now = options.now ?? (() => performance.now());
  let failure: { at: number; message: string } | null = null;
  return {
    committed() {
      failure = null;
    },
    failed(error) {
      failure = { at: now(), message: error instanceof Error ? error.message : String(error) };
    },
    problem() {
      if (!failure || now() - failure.at >= windowMs) return null;
      return `the last group of submissions failed ${Math.round(now() - failure.at)} ms ago and none committed since: ${failure.message}`;
    },
  };
}
