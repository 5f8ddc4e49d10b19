CREATE TABLE "season_results" (
	"board_id" text NOT NULL,
	"season_id" text NOT NULL,
	"rank" integer NOT NULL,
	"player_id" text,
	"score" bigint NOT NULL,
	"reached_at" timestamp with time zone NOT NULL,
	CONSTRAINT "season_results_board_id_season_id_rank_pk" PRIMARY KEY("board_id","season_id","rank")
);
--> statement-breakpoint
CREATE TABLE "seasons" (
	"board_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone,
	"closed_at" timestamp with time zone,
	CONSTRAINT "seasons_board_id_id_pk" PRIMARY KEY("board_id","id")
);
--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "flagged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "flag_reason" text;--> statement-breakpoint
ALTER TABLE "seasons" ADD CONSTRAINT "seasons_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "season_results_player_idx" ON "season_results" USING btree ("player_id");--> statement-breakpoint
CREATE UNIQUE INDEX "seasons_one_open_per_board" ON "seasons" USING btree ("board_id") WHERE "seasons"."closed_at" is null;