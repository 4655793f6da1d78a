CREATE TABLE "lease_receipt" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"lease_id" uuid NOT NULL,
	"invoice_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"lane" text NOT NULL,
	"purpose" text NOT NULL,
	"prompt_version" text,
	"model" text,
	"requester_id" uuid NOT NULL,
	"requester_session_id" uuid,
	"approval_id" uuid,
	"approver_id" uuid,
	"approver_session_id" uuid,
	"approved_at" timestamp with time zone,
	"proposal_sha256" text NOT NULL,
	"proposed_invoice_version" integer,
	"proposed_invoice_sha256" text,
	"proposed_at" timestamp with time zone,
	"written_invoice_version" integer NOT NULL,
	"written_invoice_sha256" text NOT NULL,
	"written_at" timestamp with time zone NOT NULL,
	"written_keys" text[] NOT NULL,
	CONSTRAINT "lease_receipt_lease_id_unique" UNIQUE("lease_id"),
	CONSTRAINT "lease_receipt_lane_check" CHECK ("lease_receipt"."lane" in ('self','four_eyes')),
	CONSTRAINT "lease_receipt_lane_approval" CHECK (("lease_receipt"."lane" = 'four_eyes') = ("lease_receipt"."approval_id" is not null)),
	CONSTRAINT "lease_receipt_four_eyes" CHECK ("lease_receipt"."approver_id" <> "lease_receipt"."requester_id"),
	CONSTRAINT "lease_receipt_approved" CHECK (("lease_receipt"."approval_id" is null) = ("lease_receipt"."approver_id" is null) and ("lease_receipt"."approval_id" is null) = ("lease_receipt"."approved_at" is null)),
	CONSTRAINT "lease_receipt_sha256_check" CHECK ("lease_receipt"."proposal_sha256" ~ '^[0-9a-f]{64}$' and "lease_receipt"."written_invoice_sha256" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "prompt_version" text;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "proposed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "proposed_invoice_version" integer;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "proposed_invoice_sha256" text;--> statement-breakpoint
ALTER TABLE "lease_receipt" ADD CONSTRAINT "lease_receipt_lease_id_inference_lease_id_fk" FOREIGN KEY ("lease_id") REFERENCES "public"."inference_lease"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lease_receipt" ADD CONSTRAINT "lease_receipt_invoice_id_invoice_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoice"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lease_receipt" ADD CONSTRAINT "lease_receipt_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "lease_receipt_invoice_idx" ON "lease_receipt" USING btree ("invoice_id");--> statement-breakpoint
-- The receipt joins the audit chain (0080's hook): its actor is the one who wrote (the approver, else the requester).
CREATE CONSTRAINT TRIGGER audit_lease_receipt AFTER INSERT OR UPDATE ON lease_receipt
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'id', 'approver_id,requester_id');
--> statement-breakpoint
-- No write without a receipt (docs/decisions/0079): a transaction that moves a lease to `applied`
-- fails at its commit unless that lease has its receipt by then, whatever path or hand UPDATE did it.
-- A lease inserted `applied` by hand is no write and needs none.
CREATE FUNCTION lease_applied_needs_receipt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'applied' AND NOT EXISTS (SELECT 1 FROM lease_receipt r WHERE r.lease_id = NEW.id) THEN
    RAISE EXCEPTION 'lease % was applied without a receipt', NEW.id USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER lease_applied_needs_receipt AFTER UPDATE OF status ON inference_lease
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.status = 'applied' AND OLD.status IS DISTINCT FROM 'applied')
  EXECUTE FUNCTION lease_applied_needs_receipt();
