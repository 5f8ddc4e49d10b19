CREATE TABLE "entry_removals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "entry_removals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"board_id" text NOT NULL,
	"player_id" text NOT NULL,
	"reason" text NOT NULL,
	"removed_by" text NOT NULL,
	"removed_at" timestamp with time zone NOT NULL,
	"results" integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX "entry_removals_board_idx" ON "entry_removals" USING btree ("board_id","id");--> statement-breakpoint
CREATE INDEX "entry_removals_player_idx" ON "entry_removals" USING btree ("player_id","id");