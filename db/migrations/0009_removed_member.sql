-- A member removed from their organization (docs/decisions/0062) who signs in again is refused
-- (no_organization), not given an organization of their own: the personal organization of
-- user_home_org is for a user who never had one (seeded by hand with the contract's columns, or
-- from before organizations), not for one an admin took out of a team (docs/decisions/0077).
ALTER TABLE "app_user" ADD COLUMN "removed_at" timestamp with time zone;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION user_home_org(p_user uuid) RETURNS uuid AS $$
DECLARE
  home uuid;
BEGIN
  SELECT org_id INTO home FROM membership WHERE user_id = p_user ORDER BY created_at, org_id LIMIT 1;
  IF home IS NOT NULL THEN
    RETURN home;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('user_home_org'), hashtext(p_user::text));
  SELECT org_id INTO home FROM membership WHERE user_id = p_user ORDER BY created_at, org_id LIMIT 1;
  IF home IS NOT NULL THEN
    RETURN home;
  END IF;
  -- Removed from a team: no organization of their own; the caller refuses (null).
  INSERT INTO organization (name) SELECT name FROM app_user WHERE id = p_user AND removed_at IS NULL RETURNING id INTO home;
  IF home IS NOT NULL THEN
    INSERT INTO membership (org_id, user_id, role) VALUES (home, p_user, 'admin');
  END IF;
  RETURN home;
END;
$$ LANGUAGE plpgsql;
