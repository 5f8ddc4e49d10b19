DROP INDEX "seasons_one_open_per_board";--> statement-breakpoint
CREATE INDEX "seasons_live_idx" ON "seasons" USING btree ("board_id","starts_at") WHERE "seasons"."closed_at" is null;