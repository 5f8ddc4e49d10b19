ALTER TABLE "boards" ADD COLUMN "shards" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_shards_range" CHECK ("boards"."shards" between 1 and 64);