CREATE TABLE "approval_policy" (
	"org_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"apply" text NOT NULL,
	"review_hours" integer DEFAULT 24 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" uuid,
	CONSTRAINT "approval_policy_org_id_purpose_pk" PRIMARY KEY("org_id","purpose"),
	CONSTRAINT "approval_policy_apply_check" CHECK ("approval_policy"."apply" in ('self','four_eyes')),
	CONSTRAINT "approval_policy_review_hours_check" CHECK ("approval_policy"."review_hours" between 1 and 720)
);
--> statement-breakpoint
CREATE TABLE "approval_request" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"lease_id" uuid NOT NULL,
	"invoice_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"requester_id" uuid NOT NULL,
	"requester_session_id" uuid,
	"proposal_sha256" text NOT NULL,
	"invoice_version" integer NOT NULL,
	"accept" text[],
	"submitted_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decision" text,
	"approver_id" uuid,
	"approver_session_id" uuid,
	"decided_at" timestamp with time zone,
	"comment" text,
	CONSTRAINT "approval_request_lease_id_unique" UNIQUE("lease_id"),
	CONSTRAINT "approval_request_four_eyes" CHECK ("approval_request"."approver_id" <> "approval_request"."requester_id"),
	CONSTRAINT "approval_request_decision_check" CHECK ("approval_request"."decision" in ('approved','declined')),
	CONSTRAINT "approval_request_decided_check" CHECK (("approval_request"."decision" is null) = ("approval_request"."decided_at" is null)),
	CONSTRAINT "approval_request_comment_check" CHECK (char_length("approval_request"."comment") between 1 and 2000),
	CONSTRAINT "approval_request_decline_comment_check" CHECK ("approval_request"."decision" is distinct from 'declined' or "approval_request"."comment" is not null),
	CONSTRAINT "approval_request_sha256_check" CHECK ("approval_request"."proposal_sha256" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
ALTER TABLE "approval_policy" ADD CONSTRAINT "approval_policy_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_policy" ADD CONSTRAINT "approval_policy_updated_by_app_user_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_request" ADD CONSTRAINT "approval_request_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_request" ADD CONSTRAINT "approval_request_lease_id_inference_lease_id_fk" FOREIGN KEY ("lease_id") REFERENCES "public"."inference_lease"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_request" ADD CONSTRAINT "approval_request_invoice_id_invoice_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoice"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_request" ADD CONSTRAINT "approval_request_requester_id_app_user_id_fk" FOREIGN KEY ("requester_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_request" ADD CONSTRAINT "approval_request_approver_id_app_user_id_fk" FOREIGN KEY ("approver_id") REFERENCES "public"."app_user"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approval_request_queue_idx" ON "approval_request" USING btree ("org_id","submitted_at") WHERE decision is null;--> statement-breakpoint
-- An approval request is decided once (docs/decisions/0078): a decided row never changes again,
-- and what was frozen at submit (the proposal's hash, the invoice version, the requester, the
-- window...) never changes at all. Only the decision's columns may be set, from none, once.
CREATE FUNCTION approval_request_first_decision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.decision IS NOT NULL THEN
    RAISE EXCEPTION 'approval request % is already decided', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF (NEW.id, NEW.org_id, NEW.lease_id, NEW.invoice_id, NEW.purpose, NEW.requester_id, NEW.requester_session_id,
      NEW.proposal_sha256, NEW.invoice_version, NEW.accept, NEW.submitted_at, NEW.expires_at)
     IS DISTINCT FROM (OLD.id, OLD.org_id, OLD.lease_id, OLD.invoice_id, OLD.purpose, OLD.requester_id, OLD.requester_session_id,
      OLD.proposal_sha256, OLD.invoice_version, OLD.accept, OLD.submitted_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'approval request % is frozen but for its decision', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER approval_request_first_decision BEFORE UPDATE ON approval_request
  FOR EACH ROW EXECUTE FUNCTION approval_request_first_decision();
--> statement-breakpoint
-- The lane joins the audit chain (0080's hook): every request, submitted and decided (its actor the
-- approver once there is one, else the requester), and every policy set (by whom).
CREATE CONSTRAINT TRIGGER audit_approval_request AFTER INSERT OR UPDATE ON approval_request
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'id', 'approver_id,requester_id,@');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER audit_approval_policy AFTER INSERT OR UPDATE ON approval_policy
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'org_id,purpose', 'updated_by,@');
