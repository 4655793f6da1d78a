// lib/leases/notice.ts: a lease event's NOTIFY payload, parsed, and the frame it makes from
// the last one. The route's use of it, against both databases: tests/integration/leases/lease-events.test.ts.
import { describe, expect, it } from "vitest";
import { applyLeaseNotice, LEASE_EVENTS_PAGE, parseLeaseNotice, type LeaseView } from "@/lib/leases";

const LEASE = "6f1c1f59-8d55-4f39-9a51-0c1a3c9e4b10";
const view: LeaseView = {
  id: LEASE,
  actorId: "0b6f7f3e-2f0e-4d39-8c55-4a1b2c3d4e5f",
  invoiceId: "1b6f7f3e-2f0e-4d39-8c55-4a1b2c3d4e5f",
  purpose: "summarize_invoice",
  status: "open",
  deadlineAt: new Date("2026-11-30T10:01:00Z"),
  createdAt: new Date("2026-11-30T10:00:00Z"),
  proposal: null,
  closedReason: null,
  now: new Date("2026-11-30T10:00:01Z"),
  events: [{ id: 10, at: new Date("2026-11-30T10:00:00Z"), kind: "opened", detail: { ttl_seconds: 60 } }],
  eventsBefore: null,
};
const payload = (id: number, kind: string, lease: Record<string, unknown>, at = "2026-11-30T10:00:05.123456+00:00") => ({
  lease_id: LEASE,
  kind,
  event: { id, at, kind, detail: null },
  lease,
});

describe("parseLeaseNotice", () => {
  it("takes the trigger's payload, and nothing less", () => {
    const notice = parseLeaseNotice(payload(11, "proposed", { status: "proposed", closed_reason: null, proposal: { summary: "S", model: "m" }, changed_here: true }));
    expect(notice).toMatchObject({ kind: "proposed", event: { id: 11, at: new Date("2026-11-30T10:00:05.123Z") }, lease: { status: "proposed" } });
    // A bare notice (a payload too long for NOTIFY), an unknown status or kind, a bad time: null, so the stream reads.
    expect(parseLeaseNotice({ lease_id: LEASE, kind: "proposed" })).toBeNull();
    expect(parseLeaseNotice(payload(11, "proposed", { status: "done", closed_reason: null, proposal: null, changed_here: true }))).toBeNull();
    expect(parseLeaseNotice(payload(11, "teleported", { status: "open", closed_reason: null, proposal: null, changed_here: false }))).toBeNull();
    expect(parseLeaseNotice(payload(11, "proposed", { status: "open", closed_reason: null, proposal: null, changed_here: false }, "yesterday"))).toBeNull();
  });
});

describe("applyLeaseNotice", () => {
  const proposed = parseLeaseNotice(payload(12, "proposed", { status: "proposed", closed_reason: null, proposal: { summary: "S", model: "m", extra: 1 }, changed_here: true }))!;
  const refusal = parseLeaseNotice(payload(11, "apply_refused", { status: "open", closed_reason: null, proposal: null, changed_here: false }, "2026-11-30T10:00:00.5+00:00"))!;

  it("a transaction that changed the lease: its state, its event, its clock", () => {
    const next = applyLeaseNotice(view, proposed)!;
    expect(next).toMatchObject({ status: "proposed", proposal: { summary: "S", model: "m", extra: 1 }, closedReason: null, now: new Date("2026-11-30T10:00:05.123Z") });
    expect(next.events.map((e) => e.id)).toEqual([10, 12]);
  });

  it("one that only recorded a refusal: the event joins in id order, the state and a later clock stay", () => {
    const afterProposed = applyLeaseNotice(view, proposed)!;
    const next = applyLeaseNotice(afterProposed, refusal)!;
    expect(next.status).toBe("proposed");
    expect(next.proposal).toEqual(afterProposed.proposal);
    expect(next.events.map((e) => e.id)).toEqual([10, 11, 12]);
    expect(next.now).toEqual(afterProposed.now);
  });

  it("an event the view already has changes nothing; another lease's notice is not this one's", () => {
    const once = applyLeaseNotice(view, proposed)!;
    expect(applyLeaseNotice(once, proposed)).toBe(once);
    expect(applyLeaseNotice(view, { ...proposed, lease_id: "7f1c1f59-8d55-4f39-9a51-0c1a3c9e4b10" })).toBeNull();
  });
});

describe("applyLeaseNotice keeps one page of events, as a read does", () => {
  const N = LEASE_EVENTS_PAGE;
  const refused = (id: number) =>
    parseLeaseNotice(payload(id, "apply_refused", { status: "open", closed_reason: null, proposal: null, changed_here: false }))!;
  /** The view with events 10 .. 10 + count - 1, and the cursor a read would give it. */
  const withEvents = (count: number, eventsBefore: number | null = null): LeaseView => ({
    ...view,
    events: Array.from({ length: count }, (_, i) => ({ id: 10 + i, at: new Date("2026-11-30T10:00:00Z"), kind: "apply_refused" as const, detail: null })),
    eventsBefore,
  });

  it("below the page size: the event joins and there is still nothing before", () => {
    const next = applyLeaseNotice(withEvents(N - 1), refused(1000))!;
    expect(next.events).toHaveLength(N);
    expect(next.events.at(-1)!.id).toBe(1000);
    expect(next.eventsBefore).toBeNull();
  });

  it("a full page: the oldest event gives way and the cursor points before the new oldest", () => {
    const next = applyLeaseNotice(withEvents(N), refused(1000))!;
    expect(next.events).toHaveLength(N);
    expect(next.events[0]!.id).toBe(11);
    expect(next.events.at(-1)!.id).toBe(1000);
    expect(next.eventsBefore).toBe(11);
  });

  it("a page that already had earlier events moves on by one, and the lease's own change still comes through", () => {
    const closing = parseLeaseNotice(payload(1001, "cancelled", { status: "rejected", closed_reason: "cancelled", proposal: null, changed_here: true }))!;
    const next = applyLeaseNotice(withEvents(N, 10), closing)!;
    expect(next).toMatchObject({ status: "rejected", closedReason: "cancelled", eventsBefore: 11 });
    expect(next.events.map((e) => e.id)).toEqual([...Array.from({ length: N - 1 }, (_, i) => 11 + i), 1001]);
  });

  it("an event older than the whole page (committed late) is not on this page: the page and its cursor stay", () => {
    const page = withEvents(N, 10);
    const next = applyLeaseNotice(page, refused(5))!;
    expect(next.events).toEqual(page.events);
    expect(next.eventsBefore).toBe(10);
  });
});
