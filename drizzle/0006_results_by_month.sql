-- The score log, partitioned by month of achieved_at (declarative range partitioning, which
-- drizzle-kit cannot declare: this SQL is written by hand; the snapshot matches src/db/schema.ts).
--
-- Why the idempotency key moves to result_keys: a partitioned table's primary key must include the
-- partition key, so results can only be unique on (board, player, match, achieved_at). A replay does
-- not always carry the same achieved_at (a retry that leaves it out gets the server's clock again,
-- possibly in the next month), so uniqueness on (board, match, player) across every partition needs
-- an unpartitioned table of its own. It also keeps replays of archived (detached) months caught.
--
-- Partitions are named results_YYYY_MM and cover [first of the month, first of the next) in UTC.
-- The service creates the coming months' partitions at start and daily (src/jobs/result-partitions.ts);
-- results_default catches a result for a month without a partition (a late result for a long-gone
-- month, or the job behind), so a result is never refused for want of a partition; the job moves
-- recent months out of it into their own partition.
CREATE TABLE "result_keys" (
	"board_id" text NOT NULL,
	"player_id" text NOT NULL,
	"match_id" text NOT NULL,
	"achieved_at" timestamp with time zone NOT NULL,
	"region" text,
	CONSTRAINT "result_keys_board_id_player_id_match_id_pk" PRIMARY KEY("board_id","player_id","match_id")
);
--> statement-breakpoint
ALTER TABLE "results" RENAME TO "results_unpartitioned";--> statement-breakpoint
CREATE TABLE "results" (
	"board_id" text NOT NULL,
	"match_id" text NOT NULL,
	"player_id" text NOT NULL,
	"score" bigint NOT NULL,
	"region" text,
	"achieved_at" timestamp with time zone NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "results_board_id_player_id_match_id_achieved_at_pk" PRIMARY KEY("board_id","player_id","match_id","achieved_at")
) PARTITION BY RANGE ("achieved_at");
--> statement-breakpoint
ALTER TABLE "results" ADD CONSTRAINT "results_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "results_default" PARTITION OF "results" DEFAULT;--> statement-breakpoint
-- One partition per month the existing results fall in, and for this month and the next two.
DO $$
DECLARE
	first_month date;
	last_month date;
	m date;
BEGIN
	SELECT date_trunc('month', min(achieved_at) AT TIME ZONE 'UTC')::date INTO first_month FROM "results_unpartitioned";
	last_month := (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months')::date;
	m := least(coalesce(first_month, last_month), date_trunc('month', now() AT TIME ZONE 'UTC')::date);
	WHILE m <= last_month LOOP
		EXECUTE format('CREATE TABLE %I PARTITION OF "results" FOR VALUES FROM (%L) TO (%L)',
			'results_' || to_char(m, 'YYYY_MM'), to_char(m, 'YYYY-MM-DD') || ' 00:00:00+00',
			to_char(m + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
		m := (m + interval '1 month')::date;
	END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "results" ("board_id", "match_id", "player_id", "score", "region", "achieved_at", "recorded_at")
	SELECT "board_id", "match_id", "player_id", "score", "region", "achieved_at", "recorded_at" FROM "results_unpartitioned";--> statement-breakpoint
INSERT INTO "result_keys" ("board_id", "player_id", "match_id", "achieved_at", "region")
	SELECT "board_id", "player_id", "match_id", "achieved_at", "region" FROM "results_unpartitioned";--> statement-breakpoint
DROP TABLE "results_unpartitioned";
