ALTER TABLE "boards" ADD COLUMN IF NOT EXISTS "time_zone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN IF NOT EXISTS "rank_style" text DEFAULT 'ORDINAL' NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN IF NOT EXISTS "region_time_zones" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "season_results_score_idx" ON "season_results" USING btree ("board_id","season_id","score","rank");