DO $$ BEGIN
  ALTER TABLE "boards" ADD CONSTRAINT "boards_rank_style_known" CHECK ("boards"."rank_style" in ('ORDINAL', 'COMPETITION', 'DENSE'));
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
