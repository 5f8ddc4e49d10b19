ALTER TABLE "api_keys" ADD COLUMN "boards" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "board_scores" ADD COLUMN "tie_break_values" bigint[];--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "tie_breaks" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "min_score" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "suspect_above" double precision;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "suspect_jump" double precision;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "result_rate" jsonb;--> statement-breakpoint
ALTER TABLE "frozen_standings" ADD COLUMN "tie_break_values" bigint[];--> statement-breakpoint
ALTER TABLE "players" ADD COLUMN "flag_result" jsonb;--> statement-breakpoint
ALTER TABLE "results" ADD COLUMN "tie_break_values" bigint[];--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_min_score_range" CHECK ("boards"."min_score" between 0 and "boards"."max_score");