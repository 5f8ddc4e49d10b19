ALTER TABLE "board_scores" ADD COLUMN IF NOT EXISTS "metadata" json;--> statement-breakpoint
ALTER TABLE "results" ADD COLUMN IF NOT EXISTS "metadata" json;--> statement-breakpoint
ALTER TABLE "season_results" ADD COLUMN IF NOT EXISTS "metadata" json;