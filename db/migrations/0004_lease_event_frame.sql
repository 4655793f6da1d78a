-- The notification of a lease event carries what an open event stream needs to send its next
-- frame without reading (docs/decisions/0041-one-read-per-generation-and-frames-from-notify.md):
-- the event itself, and the lease's status, closed reason and proposal as this transaction
-- leaves them, with `changed_here` saying whether this transaction changed the lease row
-- (its xmin is ours: it holds the row's lock until commit, so no other writer comes between).
-- A transaction that only records a refusal leaves the lease as the last writer committed it,
-- and says so (changed_here false). A payload over NOTIFY's 8000 bytes (a very long summary)
-- falls back to the lease id and kind, as before: the stream then reads the lease.
CREATE OR REPLACE FUNCTION lease_event_notify() RETURNS trigger AS $$
DECLARE
  lease json;
  payload text;
BEGIN
  SELECT json_build_object(
      'status', l.status,
      'closed_reason', l.closed_reason,
      'proposal', l.proposal,
      'changed_here', l.xmin = pg_current_xact_id()::xid)
    INTO lease
    FROM inference_lease l
   WHERE l.id = NEW.lease_id;
  payload := json_build_object(
    'lease_id', NEW.lease_id,
    'kind', NEW.kind,
    'event', json_build_object('id', NEW.id, 'at', NEW.at, 'kind', NEW.kind, 'detail', NEW.detail),
    'lease', lease)::text;
  IF octet_length(payload) > 7900 THEN
    payload := json_build_object('lease_id', NEW.lease_id, 'kind', NEW.kind)::text;
  END IF;
  PERFORM pg_notify('lease_event', payload);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- A session ended (signed out): its open event streams close at once, whatever lease they follow.
CREATE OR REPLACE FUNCTION app_session_revoked_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('lease_event', json_build_object('session_revoked', NEW.id)::text);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER app_session_revoked_notify
  AFTER UPDATE OF revoked_at ON app_session
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION app_session_revoked_notify();
