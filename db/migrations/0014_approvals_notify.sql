-- A request for approval submitted or decided is announced to its organization's open approval
-- pages (GET /api/approvals/events, lib/lease-feed.ts) on the channel the lease feed already
-- LISTENs on. A request withdrawn (its lease closed by an edit, a cancel, a removal) is not a
-- write here: the stream follows the leases of the requests it shows (their lease events). Only
-- the lane's statements fire this; the self lifecycle sends nothing more (docs/decisions/0087).
CREATE OR REPLACE FUNCTION approval_request_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('lease_event', json_build_object('approvals_changed', NEW.org_id)::text);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER approval_request_notify
  AFTER INSERT OR UPDATE OF decision ON approval_request
  FOR EACH ROW EXECUTE FUNCTION approval_request_notify();
