CREATE TABLE "board_member_counts" (
	"board_id" text PRIMARY KEY NOT NULL,
	"joined" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "board_members" (
	"board_id" text NOT NULL,
	"player_id" text NOT NULL,
	"joined_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "board_members_board_id_player_id_pk" PRIMARY KEY("board_id","player_id")
);
--> statement-breakpoint
CREATE TABLE "cohort_members" (
	"board_id" text NOT NULL,
	"round" text NOT NULL,
	"tier" integer NOT NULL,
	"number" integer NOT NULL,
	"player_id" text NOT NULL,
	"placed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"outcome" text,
	CONSTRAINT "cohort_members_board_id_round_player_id_pk" PRIMARY KEY("board_id","round","player_id")
);
--> statement-breakpoint
CREATE TABLE "league_cohorts" (
	"board_id" text NOT NULL,
	"round" text NOT NULL,
	"tier" integer NOT NULL,
	"number" integer NOT NULL,
	"size" integer NOT NULL,
	CONSTRAINT "league_cohorts_board_id_round_tier_number_pk" PRIMARY KEY("board_id","round","tier","number")
);
--> statement-breakpoint
CREATE TABLE "league_players" (
	"board_id" text NOT NULL,
	"player_id" text NOT NULL,
	"tier" integer NOT NULL,
	"last_round" text,
	"last_round_ends_at" timestamp with time zone,
	CONSTRAINT "league_players_board_id_player_id_pk" PRIMARY KEY("board_id","player_id")
);
--> statement-breakpoint
CREATE TABLE "league_rounds" (
	"board_id" text NOT NULL,
	"round" text NOT NULL,
	"closed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "league_rounds_board_id_round_pk" PRIMARY KEY("board_id","round")
);
--> statement-breakpoint
CREATE TABLE "league_waiting" (
	"board_id" text NOT NULL,
	"round" text NOT NULL,
	"player_id" text NOT NULL,
	"arrived_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "league_waiting_board_id_round_player_id_pk" PRIMARY KEY("board_id","round","player_id")
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "league" jsonb;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "join_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "max_players" integer;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "max_attempts" integer;--> statement-breakpoint
CREATE INDEX "cohort_members_cohort_idx" ON "cohort_members" USING btree ("board_id","round","tier","number");--> statement-breakpoint
CREATE INDEX "cohort_members_player_idx" ON "cohort_members" USING btree ("player_id");--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_max_players_positive" CHECK ("boards"."max_players" is null or "boards"."max_players" > 0);--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_max_attempts_positive" CHECK ("boards"."max_attempts" is null or "boards"."max_attempts" > 0);