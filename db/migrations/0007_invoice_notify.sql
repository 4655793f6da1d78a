-- Every change to an invoice bumps its version (an edit, an owner change, a status change, a
-- summary applied): the row's new version is announced on the channel the lease feed already
-- LISTENs on (lib/lease-feed.ts), so every open page of the invoice refreshes without a second
-- listener per process. The NOTIFY rides in the statement that wrote the row: no new statement
-- or transaction on any path (docs/decisions/0072).
CREATE OR REPLACE FUNCTION invoice_version_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('lease_event', json_build_object('invoice_changed', NEW.id, 'version', NEW.version)::text);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER invoice_version_notify
  AFTER UPDATE OF version ON invoice
  FOR EACH ROW WHEN (OLD.version IS DISTINCT FROM NEW.version)
  EXECUTE FUNCTION invoice_version_notify();
