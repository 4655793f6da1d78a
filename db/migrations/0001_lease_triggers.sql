-- The fencing token: a lease records the invoice version it was opened against. An insert
-- that leaves it out (a hand-seeded lease, say) gets the invoice's current version.
CREATE OR REPLACE FUNCTION inference_lease_fill_invoice_version() RETURNS trigger AS $$
BEGIN
  IF NEW.invoice_version IS NULL THEN
    SELECT version INTO NEW.invoice_version FROM invoice WHERE id = NEW.invoice_id;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER inference_lease_fill_invoice_version
  BEFORE INSERT ON inference_lease
  FOR EACH ROW EXECUTE FUNCTION inference_lease_fill_invoice_version();
--> statement-breakpoint
-- Every transition and every refusal writes a lease_event; announcing those inserts lets
-- open views (server-sent events) follow a lease without polling.
CREATE OR REPLACE FUNCTION lease_event_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('lease_event', json_build_object('lease_id', NEW.lease_id, 'kind', NEW.kind)::text);
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER lease_event_notify
  AFTER INSERT ON lease_event
  FOR EACH ROW EXECUTE FUNCTION lease_event_notify();
