-- audit_source_rows takes the keys to render: a walk from a mark (lib/audit/verify.ts
-- verifyChain({from})) checks only the rows the new entries name, and audit_jcs is what it spends
-- its time on. With no keys (null), every row of the organization, as before. The scopes stay
-- written once, here: the walk no longer restates them in TypeScript.
DROP FUNCTION IF EXISTS audit_source_rows(text, uuid);
--> statement-breakpoint
CREATE FUNCTION audit_source_rows(p_source text, p_org uuid, p_keys text[] DEFAULT NULL) RETURNS TABLE (source_key text, row_json text)
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
  -- The key first, the JSON only for the rows asked for.
  RETURN QUERY EXECUTE format(
    'SELECT y.k, audit_row_json(y.r) FROM (SELECT audit_row_key(x.r, %L) AS k, x.r FROM (%s) AS x) AS y WHERE $2 IS NULL OR y.k = ANY($2)',
    s.key_cols, q) USING p_org, p_keys;
END;
$$;
