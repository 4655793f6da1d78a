CREATE TABLE "rate_limit" (
	"key" text PRIMARY KEY NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"expire" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "app_session" ADD COLUMN "expires_at" timestamp with time zone DEFAULT now() + interval '12 hours' NOT NULL;--> statement-breakpoint
ALTER TABLE "inference_lease" ADD COLUMN "run_nonce" text DEFAULT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') NOT NULL;