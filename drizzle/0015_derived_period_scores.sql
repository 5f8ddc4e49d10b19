-- A BEST board's SEASON, MONTHLY, WEEKLY and DAILY board scores are derived from the score log
-- from now on (keepsBoardScores in src/model/board.ts): the rows kept for them are dropped. Only
-- ALL_TIME rows stay for BEST boards; SUM boards keep every row (their totals are checked against
-- maxScore). Nothing is lost: every one of those rows is the best result logged in its bucket's span.
CREATE INDEX "results_achieved_at_brin" ON "results" USING brin ("achieved_at");--> statement-breakpoint
DELETE FROM "board_scores" s USING "boards" b
	WHERE s."board_id" = b."id" AND b."aggregate" = 'BEST' AND s."period" <> 'ALL_TIME';
