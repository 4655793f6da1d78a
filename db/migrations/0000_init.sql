CREATE TABLE "app_session" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "app_user" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text NOT NULL,
	CONSTRAINT "app_user_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "inference_lease" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"actor_id" uuid NOT NULL,
	"invoice_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"status" text NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	"proposal" jsonb,
	"created_at" timestamp with time zone DEFAULT now(),
	"session_id" uuid,
	"invoice_version" integer,
	"closed_reason" text,
	"updated_at" timestamp with time zone DEFAULT now(),
	CONSTRAINT "inference_lease_status_check" CHECK ("inference_lease"."status" in ('open','proposed','applied','expired','rejected'))
);
--> statement-breakpoint
CREATE TABLE "invoice" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"owner_id" uuid NOT NULL,
	"number" text NOT NULL,
	"counterparty" text NOT NULL,
	"currency" text NOT NULL,
	"total_cents" integer NOT NULL,
	"issued_on" date NOT NULL,
	"due_on" date NOT NULL,
	"summary" text,
	"version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_line" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"invoice_id" uuid NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"description" text NOT NULL,
	"quantity" integer NOT NULL,
	"unit_price_cents" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lease_event" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"lease_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"kind" text NOT NULL,
	"detail" jsonb
);
--> statement-breakpoint
ALTER TABLE "app_session" ADD CONSTRAINT "app_session_user_id_app_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD CONSTRAINT "inference_lease_actor_id_app_user_id_fk" FOREIGN KEY ("actor_id") REFERENCES "public"."app_user"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD CONSTRAINT "inference_lease_invoice_id_invoice_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoice"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice" ADD CONSTRAINT "invoice_owner_id_app_user_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."app_user"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_line" ADD CONSTRAINT "invoice_line_invoice_id_invoice_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoice"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lease_event" ADD CONSTRAINT "lease_event_lease_id_inference_lease_id_fk" FOREIGN KEY ("lease_id") REFERENCES "public"."inference_lease"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "inference_lease_one_in_flight" ON "inference_lease" USING btree ("invoice_id","purpose") WHERE status in ('open','proposed');--> statement-breakpoint
CREATE INDEX "inference_lease_sweep_idx" ON "inference_lease" USING btree ("deadline_at") WHERE status in ('open','proposed');--> statement-breakpoint
CREATE INDEX "inference_lease_actor_idx" ON "inference_lease" USING btree ("actor_id");--> statement-breakpoint
CREATE INDEX "inference_lease_session_idx" ON "inference_lease" USING btree ("session_id") WHERE status in ('open','proposed');--> statement-breakpoint
CREATE INDEX "invoice_owner_idx" ON "invoice" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "invoice_line_invoice_idx" ON "invoice_line" USING btree ("invoice_id");--> statement-breakpoint
CREATE INDEX "lease_event_lease_idx" ON "lease_event" USING btree ("lease_id","id");