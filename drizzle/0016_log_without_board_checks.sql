ALTER TABLE "board_scores" DROP CONSTRAINT "board_scores_board_id_boards_id_fk";
--> statement-breakpoint
ALTER TABLE "results" DROP CONSTRAINT "results_board_id_boards_id_fk";
