import { builder } from './builder.js';

export const PeriodEnum = builder.enumType('Period', {
  description: "Which time bucket of a board to read or write. Buckets follow the board's time zone (or its region's), UTC by default.",
  values: {
    ALL_TIME: {},
    SEASON: { description: "The board's current season (see startSeason / closeSeason)." },
    MONTHLY: {},
    WEEKLY: { description: 'ISO weeks, Monday to Sunday.' },
    DAILY: {},
  } as const,
});

export const ScoreOrderEnum = builder.enumType('ScoreOrder', {
  description: 'Which direction wins.',
  values: {
    HIGH_FIRST: { description: 'Higher scores rank first (points).' },
    LOW_FIRST: { description: 'Lower scores rank first (race times).' },
  } as const,
});

export const RankStyleEnum = builder.enumType('RankStyle', {
  description: 'How equal scores share ranks.',
  values: {
    ORDINAL: { description: "1, 2, 3, 4: a rank each; equal scores ordered by who reached the score first, then by player id (today's)." },
    COMPETITION: { description: '1, 2, 2, 4: equal scores share the best of their ranks; the next rank skips.' },
    DENSE: { description: '1, 2, 2, 3: equal scores share a rank; the next rank follows. Only on boards created with rankStyle DENSE.' },
  } as const,
});

/** What the optional rankStyle argument of every read that serves ranks says of itself. */
export const RANK_STYLE_ARG = {
  type: RankStyleEnum,
  description: "How equal scores share ranks in this answer; the board's rankStyle when left out.",
} as const;

export const AggregateEnum = builder.enumType('Aggregate', {
  description: "How a player's submissions in one bucket combine into their board score.",
  values: {
    BEST: { description: 'The best single submission (the highest, or the lowest on a LOW_FIRST board).' },
    SUM: { description: 'The running total of all submissions.' },
  } as const,
});
