ALTER TABLE "boards" ADD COLUMN "time_zone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "region_time_zones" jsonb DEFAULT '[]'::jsonb NOT NULL;