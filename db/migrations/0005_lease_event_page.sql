-- Where a page of a lease's timeline starts: the id of the (size + 1)-th newest event of lease
-- $1 before id $2, or null when there are no more than `size` (docs/decisions/0043). A lease
-- read takes the events from there on, so it touches at most size + 1 events however long the
-- timeline is.
--
-- The planner expects a handful of events per lease (the average), and for a handful reading
-- them all through a bitmap scan and sorting looks cheapest; for a lease with thousands of
-- refusals that is every one of them. Here, with bitmap scans and sorts off, the one cheap plan
-- left is the backward scan of lease_event_lease_idx (lease_id, id) that stops after size + 1
-- entries. A function with SET clauses is never inlined, so the settings hold for this query
-- only.
CREATE FUNCTION lease_event_page_start(lease uuid, before bigint, size integer) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
SET enable_bitmapscan = off
SET enable_sort = off
AS $$
  SELECT id FROM lease_event WHERE lease_id = $1 AND id < $2 ORDER BY id DESC OFFSET $3 LIMIT 1
$$;
