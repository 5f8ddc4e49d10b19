CREATE TABLE "board_scores" (
	"board_id" text NOT NULL,
	"period" text NOT NULL,
	"bucket" text NOT NULL,
	"region" text DEFAULT '' NOT NULL,
	"player_id" text NOT NULL,
	"score" bigint NOT NULL,
	"reached_at" timestamp with time zone NOT NULL,
	CONSTRAINT "board_scores_board_id_period_bucket_region_player_id_pk" PRIMARY KEY("board_id","period","bucket","region","player_id")
);
--> statement-breakpoint
CREATE TABLE "boards" (
	"id" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"order" text NOT NULL,
	"aggregate" text NOT NULL,
	"max_score" bigint NOT NULL,
	"periods" text[] NOT NULL,
	"regions" text[] NOT NULL,
	"top_size" integer NOT NULL,
	"daily_retention_days" integer DEFAULT 7 NOT NULL,
	"weekly_retention_days" integer DEFAULT 35 NOT NULL,
	"monthly_retention_days" integer DEFAULT 396 NOT NULL,
	"epoch" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "boards_max_score_positive" CHECK ("boards"."max_score" > 0),
	CONSTRAINT "boards_top_size_range" CHECK ("boards"."top_size" between 1 and 100)
);
--> statement-breakpoint
CREATE TABLE "friendships" (
	"player_id" text NOT NULL,
	"friend_id" text NOT NULL,
	CONSTRAINT "friendships_player_id_friend_id_pk" PRIMARY KEY("player_id","friend_id")
);
--> statement-breakpoint
CREATE TABLE "players" (
	"id" text PRIMARY KEY NOT NULL,
	"display_name" text,
	"avatar_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "results" (
	"board_id" text NOT NULL,
	"match_id" text NOT NULL,
	"player_id" text NOT NULL,
	"score" bigint NOT NULL,
	"region" text,
	"achieved_at" timestamp with time zone NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "results_board_id_match_id_player_id_pk" PRIMARY KEY("board_id","match_id","player_id")
);
--> statement-breakpoint
ALTER TABLE "board_scores" ADD CONSTRAINT "board_scores_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "results" ADD CONSTRAINT "results_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "board_scores_player_idx" ON "board_scores" USING btree ("player_id");--> statement-breakpoint
CREATE INDEX "friendships_friend_idx" ON "friendships" USING btree ("friend_id");--> statement-breakpoint
CREATE INDEX "results_board_player_idx" ON "results" USING btree ("board_id","player_id");