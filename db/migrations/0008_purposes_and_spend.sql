-- Purposes and spend (docs/contract.md, Purposes; Spend): the targets of review_invoice
-- (invoice.review_notes) and categorize_lines (invoice_line.category, from the chart of accounts
-- below), every model call's usage and cost, and each organization's spending caps.
CREATE TABLE "account" (
	"code" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"keywords" text[] DEFAULT '{}'::text[] NOT NULL
);
--> statement-breakpoint
CREATE TABLE "model_usage" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"actor_id" uuid NOT NULL,
	"lease_id" uuid NOT NULL,
	"invoice_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" integer NOT NULL,
	"output_tokens" integer NOT NULL,
	"cost_cents" numeric(18, 6) NOT NULL,
	"outcome" text NOT NULL,
	"estimated" boolean DEFAULT false NOT NULL,
	"call_key" text NOT NULL,
	"at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "model_usage_call_key_unique" UNIQUE("call_key")
);
--> statement-breakpoint
CREATE TABLE "org_budget" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"organization_daily_cents" integer,
	"organization_monthly_cents" integer,
	"member_daily_cents" integer,
	"member_monthly_cents" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" uuid,
	CONSTRAINT "org_budget_caps_check" CHECK (coalesce("org_budget"."organization_daily_cents", 0) >= 0 and coalesce("org_budget"."organization_monthly_cents", 0) >= 0 and coalesce("org_budget"."member_daily_cents", 0) >= 0 and coalesce("org_budget"."member_monthly_cents", 0) >= 0)
);
--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "reserved_cents" numeric(18, 6);--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "review_notes" jsonb;--> statement-breakpoint
ALTER TABLE "invoice" ADD COLUMN "review_notes_version" integer;--> statement-breakpoint
ALTER TABLE "invoice_line" ADD COLUMN "category" text;--> statement-breakpoint
ALTER TABLE "model_usage" ADD CONSTRAINT "model_usage_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_usage" ADD CONSTRAINT "model_usage_actor_id_app_user_id_fk" FOREIGN KEY ("actor_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_usage" ADD CONSTRAINT "model_usage_lease_id_inference_lease_id_fk" FOREIGN KEY ("lease_id") REFERENCES "public"."inference_lease"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "org_budget" ADD CONSTRAINT "org_budget_org_id_organization_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "org_budget" ADD CONSTRAINT "org_budget_updated_by_app_user_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "model_usage_org_at_idx" ON "model_usage" USING btree ("org_id","at");--> statement-breakpoint
CREATE INDEX "model_usage_actor_at_idx" ON "model_usage" USING btree ("org_id","actor_id","at");--> statement-breakpoint
ALTER TABLE "invoice_line" ADD CONSTRAINT "invoice_line_category_account_code_fk" FOREIGN KEY ("category") REFERENCES "public"."account"("code") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invoice_org_counterparty_idx" ON "invoice" USING btree ("org_id",lower("counterparty"),"currency");
--> statement-breakpoint
-- The fixed chart of accounts categorize_lines chooses from (lib/purposes/categorize-lines.ts):
-- the same for every organization. `keywords` are what the local model matches a line's
-- description against; the openai-compatible lane is given the codes and names.
INSERT INTO "account" ("code", "name", "keywords") VALUES
  ('5000', 'Cost of goods sold', '{goods,materials,parts,components,stock,inventory,wholesale}'),
  ('6000', 'Professional services', '{consulting,consultancy,advisory,audit,legal,accounting,services,retainer,implementation,design,development}'),
  ('6100', 'Software and subscriptions', '{software,licence,license,licences,licenses,subscription,saas,hosting,cloud,seats,support}'),
  ('6200', 'Hardware and equipment', '{hardware,laptop,laptops,monitor,monitors,server,servers,equipment,device,devices,printer}'),
  ('6300', 'Travel and expenses', '{travel,flight,flights,hotel,train,taxi,mileage,accommodation,per,diem,expenses}'),
  ('6400', 'Rent and facilities', '{rent,lease,office,facilities,cleaning,maintenance,utilities,electricity,water}'),
  ('6500', 'Marketing and advertising', '{marketing,advertising,ads,campaign,print,brochure,event,sponsorship}'),
  ('6600', 'Telecommunications', '{phone,mobile,internet,broadband,telecom,telephony,data}'),
  ('6700', 'Training and education', '{training,course,courses,workshop,seminar,education,certification}'),
  ('6800', 'Shipping and logistics', '{shipping,freight,delivery,courier,postage,logistics,transport}'),
  ('6900', 'Office supplies', '{paper,stationery,supplies,toner,ink,pens,office}'),
  ('7900', 'Other expenses', '{}');
