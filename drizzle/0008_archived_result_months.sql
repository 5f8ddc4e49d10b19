CREATE TABLE "archived_result_months" (
	"month" text PRIMARY KEY NOT NULL,
	"detached_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Months detached before this table existed whose tables are still there (detached, not yet dropped).
INSERT INTO "archived_result_months" ("month")
SELECT substr(c.relname, 9, 4) || '-' || substr(c.relname, 14, 2)
FROM pg_class c
WHERE c.relname ~ '^results_[0-9]{4}_[0-9]{2}$' AND c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid AND i.inhparent = 'results'::regclass)
ON CONFLICT DO NOTHING;
