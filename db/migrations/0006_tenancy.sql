CREATE TABLE "invitation" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"token_sha256" text NOT NULL,
	"invited_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone DEFAULT now() + interval '7 days' NOT NULL,
	"accepted_at" timestamp with time zone,
	"accepted_by" uuid,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "invitation_token_sha256_unique" UNIQUE("token_sha256"),
	CONSTRAINT "invitation_role_check" CHECK ("invitation"."role" in ('admin','approver','member'))
);
--> statement-breakpoint
CREATE TABLE "invoice_change" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"invoice_id" uuid NOT NULL,
	"actor_id" uuid,
	"at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"kind" text NOT NULL,
	"version" integer NOT NULL,
	"changes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "invoice_change_kind_check" CHECK ("invoice_change"."kind" in ('created','imported','edited','owner_changed','status_changed'))
);
--> statement-breakpoint
CREATE TABLE "membership" (
	"org_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "membership_org_id_user_id_pk" PRIMARY KEY("org_id","user_id"),
	CONSTRAINT "membership_role_check" CHECK ("membership"."role" in ('admin','approver','member'))
);
--> statement-breakpoint
CREATE TABLE "organization" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app_session" ADD COLUMN "org_id" uuid;--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "org_id" uuid DEFAULT null;--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "status" text DEFAULT 'open' NOT NULL;--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "paid_on" date;--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "summary_version" integer;--> statement-breakpoint
ALTER TABLE "invitation" ADD CONSTRAINT "invitation_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitation" ADD CONSTRAINT "invitation_invited_by_app_user_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitation" ADD CONSTRAINT "invitation_accepted_by_app_user_id_fk" FOREIGN KEY ("accepted_by") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_change" ADD CONSTRAINT "invoice_change_invoice_id_invoice_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoice"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_change" ADD CONSTRAINT "invoice_change_actor_id_app_user_id_fk" FOREIGN KEY ("actor_id") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "membership" ADD CONSTRAINT "membership_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "membership" ADD CONSTRAINT "membership_user_id_app_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invitation_org_idx" ON "invitation" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "invoice_change_invoice_idx" ON "invoice_change" USING btree ("invoice_id","id");--> statement-breakpoint
CREATE INDEX "membership_user_idx" ON "membership" USING btree ("user_id");--> statement-breakpoint
ALTER TABLE "app_session" ADD CONSTRAINT "app_session_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice" ADD CONSTRAINT "invoice_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "invoice_org_number_idx" ON "invoice" USING btree ("org_id","number");--> statement-breakpoint
ALTER TABLE "invoice" ADD CONSTRAINT "invoice_status_check" CHECK ("invoice"."status" in ('open','paid','void'));--> statement-breakpoint
ALTER TABLE "invoice" ADD CONSTRAINT "invoice_paid_on_check" CHECK (("invoice"."status" = 'paid') = ("invoice"."paid_on" is not null));--> statement-breakpoint
-- The organization a user works in: their oldest membership; for a user made without one (a
-- user from before organizations, or one seeded by hand with the contract's columns) an
-- organization of their own, of which they are the admin, made on first need. The lock keeps
-- two first needs of one user from making two.
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
  INSERT INTO organization (name) SELECT name FROM app_user WHERE id = p_user RETURNING id INTO home;
  IF home IS NOT NULL THEN
    INSERT INTO membership (org_id, user_id, role) VALUES (home, p_user, 'admin');
  END IF;
  RETURN home;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- An invoice inserted without an organization (seeded by hand) belongs to its owner's.
CREATE OR REPLACE FUNCTION invoice_fill_org() RETURNS trigger AS $$
BEGIN
  IF NEW.org_id IS NULL THEN
    NEW.org_id := user_home_org(NEW.owner_id);
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER invoice_fill_org
  BEFORE INSERT ON invoice
  FOR EACH ROW EXECUTE FUNCTION invoice_fill_org();
--> statement-breakpoint
-- A session inserted without an organization works in its user's.
CREATE OR REPLACE FUNCTION app_session_fill_org() RETURNS trigger AS $$
BEGIN
  IF NEW.org_id IS NULL THEN
    NEW.org_id := user_home_org(NEW.user_id);
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER app_session_fill_org
  BEFORE INSERT ON app_session
  FOR EACH ROW EXECUTE FUNCTION app_session_fill_org();
--> statement-breakpoint
-- Everyone from before organizations gets one of their own, with their invoices and sessions.
SELECT user_home_org(id) FROM app_user;
--> statement-breakpoint
UPDATE invoice SET org_id = user_home_org(owner_id) WHERE org_id IS NULL;
--> statement-breakpoint
UPDATE app_session SET org_id = user_home_org(user_id) WHERE org_id IS NULL;
--> statement-breakpoint
ALTER TABLE "invoice" ALTER COLUMN "org_id" SET NOT NULL;
--> statement-breakpoint
-- A summary already on an invoice was written at its current version or before: taken as current.
UPDATE invoice SET summary_version = version WHERE summary IS NOT NULL;
