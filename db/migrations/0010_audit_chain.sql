CREATE TABLE "audit_entry" (
	"org_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	"source" text NOT NULL,
	"source_key" text NOT NULL,
	"op" text NOT NULL,
	"actor_id" uuid,
	"canonical" text NOT NULL,
	"content_sha256" text NOT NULL,
	"prev_sha256" text NOT NULL,
	"entry_sha256" text NOT NULL,
	CONSTRAINT "audit_entry_org_id_seq_pk" PRIMARY KEY("org_id","seq"),
	CONSTRAINT "audit_entry_op_check" CHECK ("audit_entry"."op" in ('insert','update','delete'))
);
--> statement-breakpoint
CREATE TABLE "audit_export" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"actor_id" uuid NOT NULL,
	"from_day" date NOT NULL,
	"to_day" date NOT NULL,
	"format" text NOT NULL,
	"head_seq" bigint NOT NULL,
	"head_sha256" text NOT NULL,
	"at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "audit_export_format_check" CHECK ("audit_export"."format" in ('csv','json'))
);
--> statement-breakpoint
CREATE TABLE "audit_head" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"prev_sha256" text,
	"entry_sha256" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_entry_org_at_idx" ON "audit_entry" USING btree ("org_id","at");--> statement-breakpoint
-- The audit chain (docs/decisions/0080). What follows is hand-written.
--
-- RFC 8785 (JSON Canonicalization Scheme) in SQL, as the `canonicalize` package writes it:
-- members sorted by key in UTF-16 order (COLLATE "C" is code-point order, the same for every key
-- below U+10000; a key above it raises), strings escaped as JSON.stringify does (to_json's
-- escaping is the same), numbers as ECMAScript's Number::toString. Shared with the proposal hash
-- (0078) and the invoice hash (0079). tests/integration/audit/jcs.test.ts holds it to the package.
--
-- A number: an integer up to 2^53 is its digits; any other goes through float8, whose text is
-- the shortest that reads back (extra_float_digits >= 1), and is laid out as ECMAScript does.
-- A number no float8 holds (1e400) raises, as RFC 8785 asks.
CREATE OR REPLACE FUNCTION audit_jcs_number(n numeric) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET extra_float_digits = 1
AS $$
DECLARE
  m text[];
  digits text;
  point integer;
  k integer;
  e integer;
  lead integer;
  body text;
  shorter numeric;
BEGIN
  IF n = trunc(n) AND abs(n) <= 9007199254740992 THEN
    RETURN trunc(n)::text;
  END IF;
  m := regexp_match((n::float8)::text, '^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([-+][0-9]+))?$');
  IF m IS NULL THEN
    RAISE EXCEPTION 'audit_jcs: % is not a finite number', n;
  END IF;
  digits := m[2] || coalesce(m[3], '');
  -- The value is 0.<digits> x 10^point once leading zeros are gone (ECMAScript's n).
  point := length(m[2]) + coalesce(m[4]::integer, 0);
  lead := length(digits) - length(ltrim(digits, '0'));
  digits := rtrim(ltrim(digits, '0'), '0');
  point := point - lead;
  k := length(digits);
  IF k = 0 THEN
    RETURN '0';
  END IF;
  -- float8's text leaves out a decimal that lies exactly halfway between two doubles, which
  -- ECMAScript takes (reading it back rounds half to even, to this double). Such a midpoint has
  -- 17 digits or fewer only between 2^53 (below, midpoints have 54 or more) and 1e40 (above, at
  -- most 23 of its zeros trail, 5^24 being more than any double's odd part): there the shortest
  -- rounding that reads back is taken.
  IF abs(n) > 9007199254740992 AND abs(n) < 1e40 AND k > 1 THEN
    FOR len IN 1 .. k - 1 LOOP
      shorter := round(('0.' || digits)::numeric, len);
      IF (shorter::text || 'e' || point)::float8 = abs(n)::float8 THEN
        IF shorter >= 1 THEN
          digits := '1';
          point := point + 1;
        ELSE
          digits := rtrim(substr(shorter::text, 3), '0');
        END IF;
        k := length(digits);
        EXIT;
      END IF;
    END LOOP;
  END IF;
  IF k <= point AND point <= 21 THEN
    body := digits || repeat('0', point - k);
  ELSIF 0 < point AND point <= 21 THEN
    body := left(digits, point) || '.' || substr(digits, point + 1);
  ELSIF -6 < point AND point <= 0 THEN
    body := '0.' || repeat('0', -point) || digits;
  ELSE
    e := point - 1;
    body := left(digits, 1) || CASE WHEN k > 1 THEN '.' || substr(digits, 2) ELSE '' END
      || 'e' || CASE WHEN e >= 0 THEN '+' ELSE '-' END || abs(e)::text;
  END IF;
  RETURN m[1] || body;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_jcs(v jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  out text;
BEGIN
  CASE jsonb_typeof(v)
  WHEN 'object' THEN
    IF EXISTS (SELECT 1 FROM jsonb_object_keys(v) AS k WHERE k ~ '[\U00010000-\U0010FFFF]') THEN
      RAISE EXCEPTION 'audit_jcs: a key above U+FFFF';
    END IF;
    -- Scalars written here, not by a call per value: a call only for a container or a number
    -- that is not a plain integer of up to 15 digits (which every double writes as its digits).
    SELECT '{' || coalesce(string_agg(to_json(e.key)::text || ':' || CASE
        WHEN e.t IN ('object', 'array') THEN audit_jcs(e.value)
        WHEN e.t = 'number' AND e.value::text !~ '^-?[0-9]{1,15}$' THEN audit_jcs_number((e.value #>> '{}')::numeric)
        ELSE e.value::text END, ',' ORDER BY e.key COLLATE "C"), '') || '}'
      INTO out FROM (SELECT j.key, j.value, jsonb_typeof(j.value) AS t FROM jsonb_each(v) AS j) AS e;
    RETURN out;
  WHEN 'array' THEN
    SELECT '[' || coalesce(string_agg(CASE
        WHEN e.t IN ('object', 'array') THEN audit_jcs(e.value)
        WHEN e.t = 'number' AND e.value::text !~ '^-?[0-9]{1,15}$' THEN audit_jcs_number((e.value #>> '{}')::numeric)
        ELSE e.value::text END, ',' ORDER BY e.i), '') || ']'
      INTO out FROM (SELECT j.value, j.i, jsonb_typeof(j.value) AS t FROM jsonb_array_elements(v) WITH ORDINALITY AS j(value, i)) AS e;
    RETURN out;
  WHEN 'number' THEN
    RETURN audit_jcs_number((v #>> '{}')::numeric);
  ELSE
    -- A string, true, false or null: jsonb writes them as JSON.stringify does.
    RETURN v::text;
  END CASE;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_sha256(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT encode(sha256(convert_to(t, 'UTF8')), 'hex') $$;
--> statement-breakpoint
-- An invoice's content hash (docs/decisions/0079): every column but updated_at, and its lines by
-- position, id; dates as YYYY-MM-DD. Null for a missing invoice.
CREATE OR REPLACE FUNCTION invoice_sha256(p_id uuid) RETURNS text
LANGUAGE sql STABLE
AS $$
  SELECT audit_sha256(audit_jcs(jsonb_build_object(
    'id', i.id, 'org_id', i.org_id, 'owner_id', i.owner_id, 'number', i.number, 'counterparty', i.counterparty,
    'currency', i.currency, 'total_cents', i.total_cents, 'issued_on', to_char(i.issued_on, 'YYYY-MM-DD'),
    'due_on', to_char(i.due_on, 'YYYY-MM-DD'), 'status', i.status, 'paid_on', to_char(i.paid_on, 'YYYY-MM-DD'),
    'summary', i.summary, 'summary_version', i.summary_version, 'review_notes', i.review_notes,
    'review_notes_version', i.review_notes_version, 'version', i.version,
    'lines', coalesce((
      SELECT jsonb_agg(jsonb_build_object('id', l.id, 'position', l.position, 'description', l.description,
        'quantity', l.quantity, 'unit_price_cents', l.unit_price_cents, 'category', l.category) ORDER BY l.position, l.id)
      FROM invoice_line l WHERE l.invoice_id = i.id), '[]'::jsonb))))
  FROM invoice i WHERE i.id = p_id
$$;
--> statement-breakpoint
-- Where an organization's chain starts: one organization's chain cannot be spliced into another's.
CREATE OR REPLACE FUNCTION audit_genesis(p_org uuid) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT audit_sha256('claimcheck-audit:' || p_org::text) $$;
--> statement-breakpoint
-- Appends one entry to the organization's chain: the head's UPDATE takes its lock and moves it on
-- (SET reads the row as it was, so its old hash becomes the entry's prev_sha256), and the entry is
-- inserted. A first append makes the head at the genesis hash.
CREATE OR REPLACE FUNCTION audit_append(p_org uuid, p_source text, p_key text, p_op text, p_actor uuid, p_row text, p_before text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
  at timestamptz := clock_timestamp();
  canonical text;
  content text;
  h record;
BEGIN
  canonical := '{"actor_id":' || coalesce(to_json(p_actor::text)::text, 'null')
    || ',"at":' || to_json(to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text
    || coalesce(',"before":' || p_before, '')
    || ',"key":' || to_json(p_key)::text
    || ',"op":' || to_json(p_op)::text
    || ',"row":' || p_row
    || ',"source":' || to_json(p_source)::text || '}';
  content := audit_sha256(canonical);
  UPDATE audit_head SET seq = seq + 1, prev_sha256 = entry_sha256,
      entry_sha256 = audit_sha256(entry_sha256 || ':' || (seq + 1)::text || ':' || content)
    WHERE org_id = p_org
    RETURNING seq, prev_sha256, entry_sha256 INTO h;
  IF NOT FOUND THEN
    INSERT INTO audit_head (org_id, seq, prev_sha256, entry_sha256) VALUES (p_org, 0, NULL, audit_genesis(p_org))
      ON CONFLICT (org_id) DO NOTHING;
    UPDATE audit_head SET seq = seq + 1, prev_sha256 = entry_sha256,
        entry_sha256 = audit_sha256(entry_sha256 || ':' || (seq + 1)::text || ':' || content)
      WHERE org_id = p_org
      RETURNING seq, prev_sha256, entry_sha256 INTO h;
  END IF;
  INSERT INTO audit_entry (org_id, seq, at, source, source_key, op, actor_id, canonical, content_sha256, prev_sha256, entry_sha256)
    VALUES (p_org, h.seq, at, p_source, p_key, p_op, p_actor, canonical, content, h.prev_sha256, h.entry_sha256);
END;
$$;
--> statement-breakpoint
-- A row as the chain records it: its columns as to_jsonb gives them with timestamps in UTC (the
-- function's TimeZone), in RFC 8785. The trigger and `npm run audit:verify` both render rows here.
CREATE OR REPLACE FUNCTION audit_row_json(r jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT audit_jcs(r) $$;
--> statement-breakpoint
-- The row's key as text: the key columns' values joined by ':'.
CREATE OR REPLACE FUNCTION audit_row_key(r jsonb, cols text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT string_agg(r ->> c, ':' ORDER BY i) FROM unnest(string_to_array(cols, ',')) WITH ORDINALITY AS u(c, i) $$;
--> statement-breakpoint
-- THE HOOK. One trigger function feeds the chain from any table, told by its arguments how:
--   1. where the organization is: 'org:<column>' (the row's own), 'invoice:<column>' (through
--      that invoice), 'lease:<column>' (through that lease's invoice; the lease's actor is the
--      actor when the row names none);
--   2. the key columns, comma-separated ('id', 'org_id,user_id');
--   3. who acted: columns of the row tried in order, and '@' for the transaction's
--      `claimcheck.actor` setting (set_config(..., true), lib/audit/actor.ts), comma-separated.
-- A table joins the chain with one statement, as those below, e.g. for 0078's request:
--   CREATE CONSTRAINT TRIGGER audit_approval_request AFTER INSERT OR UPDATE ON approval_request
--     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
--     EXECUTE FUNCTION audit_row_trigger('org:org_id', 'id', 'approver_id,requester_id,@');
-- `npm run audit:verify` finds the audited tables by these triggers (audit_sources below), so it
-- checks a new one's rows too: audit every UPDATE of a table whose rows change (a column left out
-- of `UPDATE OF` changes the row unrecorded, and verify says so).
-- Deferred: it runs at COMMIT, in the order the rows were written, so the head is the last lock a
-- transaction takes and is held from its first append to its end.
CREATE OR REPLACE FUNCTION audit_row_trigger() RETURNS trigger
LANGUAGE plpgsql
SET TimeZone = 'UTC'
AS $$
DECLARE
  r jsonb;
  o jsonb;
  changed jsonb;
  org uuid;
  actor uuid;
  via text := split_part(TG_ARGV[0], ':', 1);
  col text := split_part(TG_ARGV[0], ':', 2);
  c text;
BEGIN
  IF TG_OP = 'DELETE' THEN r := to_jsonb(OLD); ELSE r := to_jsonb(NEW); END IF;
  FOREACH c IN ARRAY string_to_array(coalesce(TG_ARGV[2], ''), ',') LOOP
    IF c = '@' THEN
      actor := nullif(current_setting('claimcheck.actor', true), '')::uuid;
    ELSE
      actor := (r ->> c)::uuid;
    END IF;
    EXIT WHEN actor IS NOT NULL;
  END LOOP;
  IF via = 'org' THEN
    org := (r ->> col)::uuid;
  ELSIF via = 'invoice' THEN
    SELECT i.org_id INTO org FROM invoice i WHERE i.id = (r ->> col)::uuid;
  ELSIF via = 'lease' THEN
    SELECT i.org_id, coalesce(actor, l.actor_id) INTO org, actor
      FROM inference_lease l JOIN invoice i ON i.id = l.invoice_id WHERE l.id = (r ->> col)::uuid;
  END IF;
  IF org IS NULL THEN
    RAISE EXCEPTION 'audit: no organization for % %', TG_TABLE_NAME, audit_row_key(r, TG_ARGV[1]);
  END IF;
  IF TG_OP = 'UPDATE' THEN
    o := to_jsonb(OLD);
    SELECT coalesce(jsonb_object_agg(k, o -> k), '{}'::jsonb) INTO changed
      FROM jsonb_object_keys(o) AS k WHERE (o -> k) IS DISTINCT FROM (r -> k);
  END IF;
  PERFORM audit_append(org, TG_TABLE_NAME, audit_row_key(r, TG_ARGV[1]), lower(TG_OP), actor, audit_row_json(r),
    CASE WHEN changed IS NOT NULL THEN audit_row_json(changed) END);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- The feeds: lease events (every transition and refusal), invoice changes (created, imported,
-- edited, owner and status changed), role and membership changes, budgets, and the exports.
CREATE CONSTRAINT TRIGGER audit_lease_event AFTER INSERT ON lease_event
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('lease:lease_id', 'id', '');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER audit_invoice_change AFTER INSERT ON invoice_change
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('invoice:invoice_id', 'id', 'actor_id,@');
--> statement-breakpoint
-- A membership's actor is the admin who acted (claimcheck.actor), else the member (an accepted invitation).
CREATE CONSTRAINT TRIGGER audit_membership AFTER INSERT OR UPDATE OR DELETE ON membership
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'org_id,user_id', '@,user_id');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER audit_org_budget AFTER INSERT OR UPDATE ON org_budget
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'org_id', 'updated_by,@');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER audit_audit_export AFTER INSERT ON audit_export
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_row_trigger('org:org_id', 'id', 'actor_id');
--> statement-breakpoint
-- The audited tables and how (the hook's arguments), read from the triggers themselves.
CREATE OR REPLACE FUNCTION audit_sources() RETURNS TABLE (source text, via text, key_cols text)
LANGUAGE sql STABLE
AS $$
  SELECT DISTINCT c.relname::text, a[1], a[2]
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    CROSS JOIN LATERAL (SELECT string_to_array(encode(t.tgargs, 'escape'), '\000') AS a) AS args
   WHERE t.tgfoid = 'audit_row_trigger'::regproc
$$;
--> statement-breakpoint
-- Every row of an audited table that belongs to the organization, keyed and rendered as the
-- trigger renders it: what `npm run audit:verify` compares with each key's latest entry.
CREATE OR REPLACE FUNCTION audit_source_rows(p_source text, p_org uuid) RETURNS TABLE (source_key text, row_json text)
LANGUAGE plpgsql STABLE
SET TimeZone = 'UTC'
AS $$
DECLARE
  s record;
  col text;
  q text;
BEGIN
  SELECT * INTO s FROM audit_sources() AS x WHERE x.source = p_source;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'audit: % is not audited', p_source;
  END IF;
  col := split_part(s.via, ':', 2);
  q := CASE split_part(s.via, ':', 1)
    WHEN 'org' THEN format('SELECT to_jsonb(t) AS r FROM %I t WHERE t.%I = $1', p_source, col)
    WHEN 'invoice' THEN format('SELECT to_jsonb(t) AS r FROM %I t JOIN invoice i ON i.id = t.%I WHERE i.org_id = $1', p_source, col)
    WHEN 'lease' THEN format('SELECT to_jsonb(t) AS r FROM %I t JOIN inference_lease l ON l.id = t.%I JOIN invoice i ON i.id = l.invoice_id WHERE i.org_id = $1', p_source, col)
  END;
  RETURN QUERY EXECUTE format('SELECT audit_row_key(x.r, %L), audit_row_json(x.r) FROM (%s) AS x', s.key_cols, q) USING p_org;
END;
$$;
--> statement-breakpoint
-- The trail is append-only: an UPDATE, DELETE or TRUNCATE raises. That stops accidents; a
-- deliberate edit (as the superuser can, triggers off) is what `npm run audit:verify` catches.
CREATE OR REPLACE FUNCTION audit_entry_append_only() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  RAISE EXCEPTION 'audit_entry is append-only (%)', TG_OP;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_entry_append_only BEFORE UPDATE OR DELETE ON audit_entry
  FOR EACH ROW EXECUTE FUNCTION audit_entry_append_only();
--> statement-breakpoint
CREATE TRIGGER audit_entry_no_truncate BEFORE TRUNCATE ON audit_entry
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entry_append_only();
