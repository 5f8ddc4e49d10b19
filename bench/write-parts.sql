-- What each part of a group's log statement costs PostgreSQL, on the seeded bench board (issue 14):
--
--     npm run bench -- seed     # once
--     psql -h 127.0.0.1 -U postgres -d lb_bench -v run=$RANDOM -f bench/write-parts.sql
--
-- A group of 100 random players of the 1,000,000-player board, one result each in every bucket the
-- player holds as a board-score row (ALL_TIME alone since the bench board's day, week, month and
-- season are derived from the log: see keepsBoardScores), taken apart into the pieces
-- db/result-statements.ts sends as one statement: the advisory locks, the idempotency keys, the log
-- rows, the replays' originals, the read of the board scores before the group, the flag check, and
-- the upsert of the rows that change (about half: the fold leaves a BEST score that stands as it is).
-- Each is timed by EXPLAIN (ANALYZE, BUFFERS) without per-node timing, so the figures are close to
-- the statement's own; "read=" counts the pages that were not in shared_buffers. All in one
-- transaction, rolled back: nothing is kept. Run it a few times (new players each run).

\timing off
begin;
create temp table picked on commit drop as
  select 'p' || (floor(random() * 1000000))::int::text as player_id from generate_series(1, 100);
select count(*) from picked;
create temp table wanted on commit drop as
  select player_id, b.period, b.bucket from picked,
    (select period, bucket from board_scores where board_id = 'bench' and player_id = 'p1' and region = '') as b;
\echo == advisory locks
explain (analyze, buffers, costs off, summary on, timing off) select pg_advisory_xact_lock(k) from (select distinct hashtextextended('bench:' || player_id, 0) as k from picked order by k) as keys;
\echo == result_keys insert
explain (analyze, buffers, costs off, summary on, timing off) insert into result_keys (board_id, player_id, match_id, achieved_at, region) select 'bench', player_id, 'x-' || :'run', now(), null from picked on conflict do nothing;
\echo == results insert
explain (analyze, buffers, costs off, summary on, timing off) insert into results (board_id, player_id, match_id, score, region, achieved_at, metadata) select 'bench', player_id, 'x-' || :'run', 5, null, now(), null from picked;
\echo == originals probe
explain (analyze, buffers, costs off, summary on, timing off) select count(*) from result_keys r join picked i on r.board_id = 'bench' and r.player_id = i.player_id and r.match_id = 'y-' || :'run';
\echo == before read (500 rows, json_agg)
explain (analyze, buffers, costs off, summary on, timing off) select coalesce(json_agg(json_build_array(s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000), s.metadata::text)), '[]')::text from board_scores s join wanted w on s.board_id = 'bench' and s.period = w.period and s.bucket = w.bucket and s.region = '' and s.player_id = w.player_id;
\echo == flagged check
explain (analyze, buffers, costs off, summary on, timing off) select array(select p.id from players p where p.id in (select player_id from picked) and p.flagged_at is not null);
\echo == upsert of half the rows (warm now)
explain (analyze, buffers, costs off, summary on, timing off) insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at) select 'bench', period, bucket, '', player_id, 2000000, now() from wanted where period in ('DAILY', 'WEEKLY') or (period = 'MONTHLY' and player_id < 'p5') on conflict (board_id, period, bucket, region, player_id) do update set score = excluded.score, reached_at = excluded.reached_at returning s.score;
rollback;
