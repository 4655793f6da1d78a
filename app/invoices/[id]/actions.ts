"use server";
// The invoice page's actions, each written with the action wrapper (app/_lib/action.ts): the
// actor from the session (never from the form), the form parsed with zod, one domain call, and then the browser is sent back to the
// invoice page, with a `notice` code when there is something to say (lease-words.ts noticeOf
// turns it into words). Redirecting rather than answering makes every action work as a plain
// form post with JavaScript off (post, redirect, get: a reload repeats nothing); with
// JavaScript on, Next follows the redirect in place and the page shows the database's state.
import { redirect, RedirectType } from "next/navigation";
import { headers } from "next/headers";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { isUuid } from "@/lib/ids";
import { signInPath } from "@/lib/return-path";
import { formOf, positiveInt4, text } from "@/lib/input";
import { getInvoice, InvoicePatch } from "@/lib/invoices";
import { applyLease, submitLease } from "@/lib/leases";
import { action, rawField, stateAction } from "@/app/_lib/action";
import { sendToSignIn } from "@/app/_lib/actor";
import { datePattern, parseDate } from "@/app/_lib/format";
import { cancelLease, openLeaseAs, reassignInvoice, setInvoiceStatus, updateInvoice } from "@/app/_lib/leases";
import { STATUS_REFUSAL_WORDS } from "@/app/_lib/status-words";
import { StatusChange } from "@/lib/invoice-status";
import { editRefusal, type NoticeCode } from "@/app/_lib/lease-words";
import { localeFrom } from "@/app/_lib/viewer";
import { isPurpose } from "@/lib/purposes";

// Actions are callable by id over HTTP with any arguments: each one parses its FormData
// with formOf (through the action wrapper), so a missing or foreign argument is a refusal,
// never a crash.
const id = text().trim().max(100);
// `purpose`: which panel's button was pressed (absent: the summary's, as every form before purposes).
const SummarizeForm = formOf(z.object({ invoice_id: id, purpose: text().trim().max(100).optional() }));
// `lines_form`: the Apply form lists the proposed lines (categorize_lines), so its `line` boxes are
// the accepted ones, and none ticked is a choice of none, not an apply of everything.
const LeaseForm = formOf(
  z.object({ lease_id: id, invoice_id: id, purpose: text().trim().max(100).optional(), lines_form: text().max(10).optional() }),
);

/**
 * Back to the invoice page (the invoice list when the id is not one), with what to say, and for
 * which purpose's panel (`purpose`, left out for the summary's).
 */
function backTo(invoiceId: string | undefined, notice?: NoticeCode, purpose?: string, more: Record<string, string> = {}): never {
  if (!invoiceId || !isUuid(invoiceId)) redirect("/invoices", RedirectType.replace);
  const params = new URLSearchParams();
  if (notice) params.set("notice", notice);
  if (notice && isPurpose(purpose) && purpose !== "summarize_invoice") params.set("purpose", purpose);
  for (const [name, value] of Object.entries(more)) params.set(name, value);
  const query = params.size ? `?${params.toString()}` : "";
  // replace: with JavaScript on, the action's redirect must not add a history entry per click.
  redirect(`/invoices/${invoiceId}${query}`, RedirectType.replace);
}

export const summarizeAction = action({
  who: "actor",
  input: SummarizeForm,
  invalid: (raw) => backTo(rawField(raw, "invoice_id"), "summarize.invalid_request"),
  run: async ({ invoice_id, purpose = "summarize_invoice" }, { actor, db }) => {
    // Only the registry's purposes; open would refuse any other too, but the words are said here.
    if (!isPurpose(purpose)) backTo(invoice_id, "summarize.purpose_not_allowed");
    // A second click (or tab) gets the lease already in flight; the database decides.
    const result = await openLeaseAs(db, actor, { invoiceId: invoice_id, purpose });
    // Open judges the session's end itself once its rows are held (its insert's RETURNING), so
    // a session run out while it waited is its refusal, not the wrapper's: answered as the wrapper would.
    if (!result.ok && result.code === "not_signed_in") await sendToSignIn();
    // Over a cap: which one, and when it resets (the database's seconds from now, as the minute
    // it falls on: a reset is always at 00:00 UTC), so the page can say so, on a reload too.
    const budget =
      !result.ok && result.code === "budget_exhausted" && result.retryAfterSeconds && result.cap
        ? { cap: result.cap, resets: resetMinute(result.retryAfterSeconds) }
        : undefined;
    backTo(invoice_id, result.ok ? undefined : `summarize.${result.code}`, purpose, budget);
  },
});

/** The instant `seconds` from now, to the minute, as ISO. */
function resetMinute(seconds: number): string {
  return new Date(Math.round((Date.now() + seconds * 1000) / 60_000) * 60_000).toISOString();
}

export const applyAction = action({
  who: "actor",
  input: LeaseForm,
  invalid: (raw) => backTo(rawField(raw, "invoice_id"), "apply.lease_not_found"),
  run: async ({ lease_id, invoice_id, purpose, lines_form }, { actor, db, raw }) => {
    // The ticked lines, as the boxes name them (the changes' keys the page showed); apply refuses
    // any key its proposal does not make, and none at all (invalid_lines).
    const accept =
      lines_form && raw instanceof FormData
        ? raw.getAll("line").filter((v): v is string => typeof v === "string" && v.length <= 100)
        : undefined;
    const result = await applyLease(db, actor.id, lease_id, { accept, heldSessionId: actor.sessionId });
    // On success the panel's own state line says what happened; no second message. A closed
    // lease's refusal names why it was closed, as apply found it (the page's latest lease may
    // be a newer one by then).
    if (result.ok) backTo(invoice_id);
    // Only when a session id is passed (the HTTP route); here the wrapper's db holds the session.
    if (result.code === "not_signed_in") redirect(signInPath(`/invoices/${invoice_id}`));
    backTo(
      invoice_id,
      result.code === "lease_rejected" && result.closedReason ? `apply.lease_rejected.${result.closedReason}` : `apply.${result.code}`,
      purpose,
    );
  },
});

/**
 * Submit for approval (a purpose under the four_eyes policy, docs/decisions/0078): the proposal,
 * with the lines ticked as Apply takes them, frozen into a request an approver decides. Back to
 * the page, whose panel then says it waits, until when, and who can approve it.
 */
export const submitAction = action({
  who: "actor",
  input: LeaseForm,
  invalid: (raw) => backTo(rawField(raw, "invoice_id"), "submit.lease_not_found"),
  run: async ({ lease_id, invoice_id, purpose, lines_form }, { actor, db, raw }) => {
    const accept =
      lines_form && raw instanceof FormData
        ? raw.getAll("line").filter((v): v is string => typeof v === "string" && v.length <= 100)
        : undefined;
    const result = await submitLease(db, actor, lease_id, { accept });
    if (result.ok) backTo(invoice_id);
    if (result.code === "not_signed_in") await sendToSignIn();
    backTo(invoice_id, `submit.${result.code}`, purpose);
  },
});

/** Discard (a proposal) and Cancel (a generation) are the same close; only the words differ. */
const close = (verb: "discard" | "cancel") =>
  action({
    who: "actor",
    input: LeaseForm,
    invalid: (raw) => backTo(rawField(raw, "invoice_id"), `${verb}.lease_not_found`),
    run: async ({ lease_id, invoice_id, purpose }, { actor, db }) => {
      const result = await cancelLease(db, actor.id, lease_id);
      backTo(invoice_id, result.ok ? undefined : `${verb}.${result.code}`, purpose);
    },
  });

export const discardAction = close("discard");

export const cancelAction = close("cancel");

// Each field comes with `was_<field>`, the value the form was rendered with: only a field that
// differs from it is the user's change (a form rendered in one locale and read back in another
// must not rewrite a date nobody touched).
const EditForm = formOf(
  z.object({
    invoice_id: id,
    number: text().max(1000),
    counterparty: text().max(1000),
    issued_on: text().max(100),
    due_on: text().max(100),
    was_number: text().max(1000),
    was_counterparty: text().max(1000),
    was_issued_on: text().max(100),
    was_due_on: text().max(100),
    expected_version: z.coerce.number().pipe(positiveInt4),
  }),
);

const EDIT_FIELDS = ["number", "counterparty", "issued_on", "due_on"] as const;
type EditFields = (typeof EDIT_FIELDS)[number];
export type EditResult = { ok: boolean; message: string | null; values?: Record<EditFields, string> };

/** How the viewer types a date: what a refusal tells them to write. */
async function viewerPattern() {
  const locale = localeFrom((await headers()).get("accept-language"));
  return { locale, pattern: datePattern(locale) };
}

/**
 * Saved (or nothing to save): back to the page, like the other actions. Refused: the form's
 * state, with what was typed, so nothing is lost; with JavaScript off React renders that
 * state into the page the post answers with.
 */
export const editInvoiceAction = stateAction({
  who: "actor",
  input: EditForm,
  invalid: async (): Promise<EditResult> => ({ ok: false, message: editRefusal("invalid_request", (await viewerPattern()).pattern) }),
  run: async (form, { actor, db }): Promise<EditResult> => {
    const { locale, pattern } = await viewerPattern();
    const { invoice_id, expected_version } = form;
    const values = Object.fromEntries(EDIT_FIELDS.map((field) => [field, form[field]])) as Record<EditFields, string>;
    const current = await getInvoice(db, actor, invoice_id);
    if (!current) return { ok: false, message: editRefusal("invoice_not_found") };

    // Only what the user changed from the form as rendered is read at all, so no difference in
    // formatting (a locale, a calendar, a browser's ICU) can rewrite a field nobody touched.
    const touched = EDIT_FIELDS.filter((field) => values[field].trim() !== form[`was_${field}`].trim());
    // Dates arrive as the viewer's locale writes them (or ISO); an unreadable one is refused.
    const typed: Partial<Record<EditFields, string | null>> = Object.fromEntries(
      touched.map((field) => [field, field.endsWith("_on") ? parseDate(values[field], locale) : values[field].trim()]),
    );
    if (Object.values(typed).includes(null)) {
      return { ok: false, message: editRefusal("invalid_request", pattern), values };
    }

    // Only the fields that differ from the invoice too: saving an untouched form (or a date
    // retyped another way) must not bump the version, which would withdraw a summary waiting
    // to be applied.
    const stored = {
      number: current.number,
      counterparty: current.counterparty,
      issued_on: current.issuedOn,
      due_on: current.dueOn,
    };
    const changed = Object.fromEntries(Object.entries(typed).filter(([key, value]) => value !== stored[key as EditFields]));
    if (Object.keys(changed).length === 0) backTo(invoice_id, "edit.unchanged");
    const patch = InvoicePatch.safeParse({ ...changed, expected_version });
    if (!patch.success) return { ok: false, message: editRefusal("invalid_request", pattern), values };
    const result = await updateInvoice(db, actor, invoice_id, patch.data);
    if (!result.ok) return { ok: false, message: editRefusal(result.code, pattern), values };
    // The redirect goes to the address the last save went to (?notice=edit.saved): without this
    // the client router showed its page from then, the invoice as it was before this save.
    revalidatePath(`/invoices/${invoice_id}`);
    backTo(invoice_id, "edit.saved");
  },
});

// "Mark paid" (with its day), "Void", "Reopen": the status to set, the day as the viewer typed
// it (a browser's date field sends it as YYYY-MM-DD; without one, the locale's form is read too).
const StatusForm = formOf(
  z.object({
    invoice_id: id,
    status: text().max(20),
    paid_on: text().max(100).optional(),
    expected_version: z.coerce.number().pipe(positiveInt4),
  }),
);
export type StatusResult = { message: string | null };

/** Changed (or already so): back to the page, which shows the status. Refused: the words, in the form's state. */
export const setStatusAction = stateAction({
  who: "actor",
  input: StatusForm,
  invalid: async (): Promise<StatusResult> => ({ message: STATUS_REFUSAL_WORDS.invalid_request }),
  run: async (form, { actor, db }): Promise<StatusResult> => {
    const { locale } = await viewerPattern();
    const typed = form.paid_on?.trim() ? parseDate(form.paid_on, locale) : undefined;
    if (typed === null) return { message: STATUS_REFUSAL_WORDS.invalid_request };
    const change = StatusChange.safeParse({
      status: form.status,
      paid_on: form.status === "paid" ? typed : undefined,
      expected_version: form.expected_version,
    });
    if (!change.success) return { message: STATUS_REFUSAL_WORDS.invalid_request };
    const result = await setInvoiceStatus(db, actor, form.invoice_id, change.data);
    if (!result.ok) return { message: STATUS_REFUSAL_WORDS[result.code] };
    revalidatePath(`/invoices/${form.invoice_id}`);
    backTo(form.invoice_id);
  },
});

const OwnerForm = formOf(z.object({ invoice_id: id, owner_id: id }));

/** An admin gives the invoice to another member: back to the page, which says how it went (`?owner=`). */
export const reassignAction = action({
  who: "actor",
  input: OwnerForm,
  invalid: (raw) => ownerBackTo(rawField(raw, "invoice_id"), "invalid_request"),
  run: async ({ invoice_id, owner_id }, { actor, db }) => {
    const result = await reassignInvoice(db, actor, invoice_id, owner_id);
    ownerBackTo(invoice_id, result.ok ? "saved" : result.code);
  },
});

function ownerBackTo(invoiceId: string | undefined, code: string): never {
  if (!invoiceId || !isUuid(invoiceId)) redirect("/invoices", RedirectType.replace);
  redirect(`/invoices/${invoiceId}?owner=${encodeURIComponent(code)}#owner-heading`, RedirectType.replace);
}
