CREATE TABLE "frozen_buckets" (
	"board_id" text NOT NULL,
	"period" text NOT NULL,
	"bucket" text NOT NULL,
	"region" text DEFAULT '' NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone,
	"closed_at" timestamp with time zone NOT NULL,
	"size" integer NOT NULL,
	CONSTRAINT "frozen_buckets_board_id_period_bucket_region_pk" PRIMARY KEY("board_id","period","bucket","region")
);
--> statement-breakpoint
CREATE TABLE "frozen_standings" (
	"board_id" text NOT NULL,
	"period" text NOT NULL,
	"bucket" text NOT NULL,
	"region" text DEFAULT '' NOT NULL,
	"rank" integer NOT NULL,
	"player_id" text,
	"score" bigint NOT NULL,
	"reached_at" timestamp with time zone NOT NULL,
	"metadata" json,
	CONSTRAINT "frozen_standings_board_id_period_bucket_region_rank_pk" PRIMARY KEY("board_id","period","bucket","region","rank")
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "close_grace_seconds" integer DEFAULT 300 NOT NULL;--> statement-breakpoint
CREATE INDEX "frozen_standings_player_idx" ON "frozen_standings" USING btree ("player_id","board_id","period","region","bucket");--> statement-breakpoint
CREATE INDEX "frozen_standings_score_idx" ON "frozen_standings" USING btree ("board_id","period","bucket","region","score","rank");--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_close_grace_seconds_range" CHECK ("boards"."close_grace_seconds" between 0 and 31622400);--> statement-breakpoint
-- One table of frozen standings for every closed bucket: the closed seasons' move in, each marked closed.
INSERT INTO "frozen_standings" ("board_id", "period", "bucket", "region", "rank", "player_id", "score", "reached_at", "metadata")
  SELECT "board_id", 'SEASON', "season_id", '', "rank", "player_id", "score", "reached_at", "metadata" FROM "season_results";--> statement-breakpoint
INSERT INTO "frozen_buckets" ("board_id", "period", "bucket", "region", "starts_at", "ends_at", "closed_at", "size")
  SELECT s."board_id", 'SEASON', s."id", '', s."starts_at", s."ends_at", s."closed_at",
         coalesce((SELECT max(r."rank") FROM "season_results" r WHERE r."board_id" = s."board_id" AND r."season_id" = s."id"), 0)
  FROM "seasons" s WHERE s."closed_at" IS NOT NULL;--> statement-breakpoint
DROP TABLE "season_results";
