ALTER TABLE "index_backlog" ALTER COLUMN "board_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "index_backlog" ALTER COLUMN "player_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "index_backlog" ADD COLUMN "board_ids" text[];--> statement-breakpoint
ALTER TABLE "index_backlog" ADD COLUMN "player_ids" text[];