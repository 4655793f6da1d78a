import "server-only";
// The invoice list: each invoice with where its latest summary attempt stands, filtered and
// sorted by that state and by due date. Judged on the database clock, like every deadline:
// an attempt past its deadline reads as expired here before the sweep has recorded it.
import { and, asc, desc, eq, getTableColumns, ilike, inArray, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { appUser, inferenceLease, invoice, type Invoice } from "@/db/schema";
import { visibleInvoice, type Member } from "./access";
import { isStorableText } from "./input";
import { overdueSql } from "./invoices";
import { isInFlight, LIST_STATES, listStateOf, type ClosedReason, type LeaseStatus, type ListState } from "./lease-codes";

export type ListLease = {
  /** The lease's id when it is the member's own; another's lease is theirs alone. */
  id: string | null;
  mine: boolean;
  state: Exclude<ListState, "none">;
  closedReason: ClosedReason | null;
  deadlineAt: Date;
  /** When it reached its last state (applied, discarded...), by the database clock. */
  closedAt: Date | null;
  actorName: string;
};
export type ListRow = Invoice & { lease: ListLease | null; state: ListState; ownerName: string; overdue: boolean };

// The query string of /invoices; anything unknown falls back to the default rather than failing.
const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.preprocess((v) => (Array.isArray(v) ? v[0] : v), z.enum(values)).catch(fallback);
export const SORTS = ["issued-newest", "attention", "due-soonest", "due-latest"] as const;
export const DUE_FILTERS = ["any", "overdue", "week", "month"] as const;
/** The invoice's own status; overdue is an open one due before today. Default: any. */
export const STATUS_FILTERS = ["any", "open", "overdue", "paid", "void"] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];
/** Search words: at most 200 characters of storable text, else no search at all. */
const searchText = z.preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string().trim().max(200).refine(isStorableText)).catch("");
export const ListQuery = z.object({
  state: oneOf(["all", ...LIST_STATES], "all"),
  due: oneOf(DUE_FILTERS, "any"),
  sort: oneOf(SORTS, "issued-newest"),
  status: oneOf(STATUS_FILTERS, "any"),
  q: searchText.default(""),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** A query string (the page's, the API's, the export's: the same one), read as ListQuery. */
export function listQueryOf(params: URLSearchParams): ListQuery {
  const raw: Record<string, string[]> = {};
  for (const key of params.keys()) raw[key] ??= params.getAll(key);
  return ListQuery.parse(raw);
}

/** The query string that shows `query` (defaults left out), for links to the same rows. */
export function listQueryString(query: ListQuery): string {
  const defaults = ListQuery.parse({});
  const params = new URLSearchParams();
  for (const key of ["q", "status", "state", "due", "sort"] as const) if (query[key] !== defaults[key]) params.set(key, query[key]);
  return params.toString();
}

/** What the shown rows add up to, one entry per currency, by currency code. */
export type CurrencyTotal = { currency: string; cents: number; count: number };

export type InvoiceListing = {
  rows: ListRow[];
  totals: CurrencyTotal[];
  /** How many invoices the user has, before filtering. */
  total: number;
  /** The database's now and today, for countdowns and due dates. */
  now: Date;
  today: string;
};

function stateOf(status: LeaseStatus, closedReason: ClosedReason | null, overdue: boolean): Exclude<ListState, "none"> {
  if (isInFlight(status) && overdue) return "expired";
  // rejected (discarded, stopped at sign-out, out of date, or failed): stopped
  return listStateOf({ status, closed_reason: closedReason });
}

/** `text` as a LIKE pattern that matches itself anywhere: its wildcards and the escape character escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The status filter and the search, as conditions of the statement (the list can be long). */
function filtersSql(query: Pick<ListQuery, "status" | "q">): SQL | undefined {
  const status: Record<StatusFilter, SQL | undefined> = {
    any: undefined,
    open: eq(invoice.status, "open"),
    overdue: overdueSql,
    paid: eq(invoice.status, "paid"),
    void: eq(invoice.status, "void"),
  };
  const pattern = query.q === "" ? null : containsPattern(query.q);
  return and(status[query.status], pattern === null ? undefined : or(ilike(invoice.number, pattern), ilike(invoice.counterparty, pattern)));
}

/** Per currency, the sum of the rows' totals. */
export function totalsOf(rows: Pick<Invoice, "currency" | "totalCents">[]): CurrencyTotal[] {
  const sums = new Map<string, CurrencyTotal>();
  for (const r of rows) {
    const t = sums.get(r.currency) ?? { currency: r.currency, cents: 0, count: 0 };
    t.cents += r.totalCents;
    t.count += 1;
    sums.set(r.currency, t);
  }
  return [...sums.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

const DAY_MS = 86_400_000;
const addDays = (isoDate: string, days: number) => new Date(Date.parse(`${isoDate}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/**
 * The organization's invoices, each with where its newest summary attempt stands, whoever asked
 * for it (`lease.mine` says whether it was the member; another's lease carries no id).
 */
export async function listInvoicesWithState(db: Db, member: Member, query: ListQuery): Promise<InvoiceListing> {
  const actorId = member.id;
  const [clock] = await db
    .select({
      now: sql<string>`to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      today: sql<string>`current_date::text`,
    })
    .from(appUser)
    .where(eq(appUser.id, actorId));
  const now = new Date(clock?.now ?? Date.now());
  const today = clock?.today ?? now.toISOString().slice(0, 10);

  const [counted] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(invoice)
    .where(visibleInvoice(member));
  const invoices = await db
    .select({ ...getTableColumns(invoice), ownerName: appUser.name, overdue: overdueSql })
    .from(invoice)
    .innerJoin(appUser, eq(appUser.id, invoice.ownerId))
    .where(and(visibleInvoice(member), filtersSql(query)))
    .orderBy(desc(invoice.issuedOn), asc(invoice.number));
  const ids = invoices.map((i) => i.id);
  // The newest summary attempt on each invoice, by anyone of the organization: the list says
  // where the summary stands (a review or categories are the invoice page's).
  const leases = ids.length
    ? await db
        .selectDistinctOn([inferenceLease.invoiceId], {
          invoiceId: inferenceLease.invoiceId,
          id: inferenceLease.id,
          status: inferenceLease.status,
          closedReason: inferenceLease.closedReason,
          deadlineAt: inferenceLease.deadlineAt,
          updatedAt: inferenceLease.updatedAt,
          overdue: sql<boolean>`${inferenceLease.deadlineAt} <= now()`,
          actorName: appUser.name,
          actorId: inferenceLease.actorId,
        })
        .from(inferenceLease)
        .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
        .where(and(inArray(inferenceLease.invoiceId, ids), eq(inferenceLease.purpose, "summarize_invoice")))
        .orderBy(inferenceLease.invoiceId, desc(inferenceLease.createdAt), desc(inferenceLease.id))
    : [];
  const byInvoice = new Map(leases.map((l) => [l.invoiceId, l]));

  const all: ListRow[] = invoices.map((inv) => {
    const l = byInvoice.get(inv.id);
    if (!l) return { ...inv, lease: null, state: "none" };
    const state = stateOf(l.status, l.closedReason, l.overdue);
    const closed = state !== "generating" && state !== "proposed";
    // A lease that ran out unrecorded closed at its deadline.
    const closedAt = state === "expired" && l.status !== "expired" ? l.deadlineAt : closed ? (l.updatedAt ?? null) : null;
    return {
      ...inv,
      state,
      lease: {
        id: l.actorId === actorId ? l.id : null,
        mine: l.actorId === actorId,
        state,
        closedReason: l.closedReason,
        deadlineAt: l.deadlineAt,
        closedAt,
        actorName: l.actorName,
      },
    };
  });

  const dueBefore = query.due === "week" ? addDays(today, 8) : query.due === "month" ? addDays(today, 31) : null;
  const rows = all.filter(
    (r) =>
      (query.state === "all" || r.state === query.state) &&
      (query.due === "any" || (query.due === "overdue" ? r.dueOn < today : r.dueOn >= today && dueBefore !== null && r.dueOn < dueBefore)),
  );
  const byDue = (a: ListRow, b: ListRow) => a.dueOn.localeCompare(b.dueOn) || a.number.localeCompare(b.number);
  if (query.sort === "due-soonest") rows.sort(byDue);
  else if (query.sort === "due-latest") rows.sort((a, b) => byDue(b, a));
  else if (query.sort === "attention") {
    // What needs the user first: a summary waiting (least time left first), then one being written.
    const rank = (r: ListRow) => LIST_STATES.indexOf(r.state);
    const live = (r: ListRow) => (r.state === "proposed" || r.state === "generating" ? r.lease!.deadlineAt.getTime() : 0);
    rows.sort((a, b) => rank(a) - rank(b) || live(a) - live(b) || byDue(a, b));
  }
  return { rows, totals: totalsOf(rows), total: counted?.n ?? all.length, now, today };
}
