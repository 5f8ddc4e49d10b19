-- A fresh database gets one board, `global`, so a newcomer can submit and read at once.
-- Its ALL_TIME tie-break time counts from one year before today (see src/db/boards.ts, boardEpoch).
INSERT INTO "boards" ("id", "title", "order", "aggregate", "max_score", "periods", "regions", "top_size", "epoch")
VALUES ('global', 'Global', 'HIGH_FIRST', 'BEST', 1000000000,
        ARRAY['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'], ARRAY[]::text[], 10,
        date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '366 days')
ON CONFLICT ("id") DO NOTHING;
