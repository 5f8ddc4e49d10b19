CREATE TABLE "index_backlog" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "index_backlog_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"board_id" text NOT NULL,
	"player_id" text NOT NULL,
	"enqueued_at" timestamp with time zone DEFAULT now() NOT NULL
);
