"use server";
// The invoice page's actions. Each one: the actor from the session (never from the form),
// the form parsed with zod, one domain call, and then the browser is sent back to the
// invoice page, with a `notice` code when there is something to say (lease-words.ts noticeOf
// turns it into words). Redirecting rather than answering makes every action work as a plain
// form post with JavaScript off (post, redirect, get: a reload repeats nothing); with
// JavaScript on, Next follows the redirect in place and the page shows the database's state.
import { redirect, RedirectType } from "next/navigation";
import { headers } from "next/headers";
import { z } from "zod";
import { getDb } from "@/db/client";
import { appEnv } from "@/lib/env";
import { isUuid } from "@/lib/ids";
import { formOf, positiveInt4, text } from "@/lib/input";
import { getInvoice, InvoicePatch, updateInvoice } from "@/lib/invoices";
import { applyLease, cancelLease, openLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";
import { requireActor } from "@/app/_lib/actor";
import { datePattern, parseDate } from "@/app/_lib/format";
import { editRefusal } from "@/app/_lib/lease-words";
import { localeFrom } from "@/app/_lib/viewer";

// Actions are callable by id over HTTP with any arguments: each one parses its FormData
// with formOf, so a missing or foreign argument is a refusal, never a crash.
const id = text().trim().max(100);
const SummarizeForm = formOf(z.object({ invoice_id: id }));
const LeaseForm = formOf(z.object({ lease_id: id, invoice_id: id }));

/** Back to the invoice page (the invoice list when the id is not one), with what to say. */
function backTo(invoiceId: string | undefined, notice?: string): never {
  if (!invoiceId || !isUuid(invoiceId)) redirect("/invoices", RedirectType.replace);
  const query = notice ? `?notice=${encodeURIComponent(notice)}` : "";
  // replace: with JavaScript on, the action's redirect must not add a history entry per click.
  redirect(`/invoices/${invoiceId}${query}`, RedirectType.replace);
}

// The argument may be anything a caller sent (an action is callable by id): never assume a form.
const field = (formData: unknown, name: string) => {
  if (!(formData instanceof FormData)) return undefined;
  const value = formData.get(name);
  return typeof value === "string" ? value.trim() : undefined;
};

export async function summarizeAction(formData: FormData): Promise<void> {
  const actor = await requireActor();
  const form = SummarizeForm.safeParse(formData);
  if (!form.success) backTo(field(formData, "invoice_id"), "summarize.invalid_request");
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: form.data.invoice_id,
    purpose: "summarize_invoice",
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  // A second click (or tab) gets the lease already in flight; the database decides.
  const result = await openLease(await getDb(), input, inngestDispatch);
  backTo(form.data.invoice_id, result.ok ? undefined : `summarize.${result.code}`);
}

export async function applyAction(formData: FormData): Promise<void> {
  const actor = await requireActor();
  const form = LeaseForm.safeParse(formData);
  if (!form.success) backTo(field(formData, "invoice_id"), "apply.lease_not_found");
  const result = await applyLease(await getDb(), actor.id, form.data.lease_id);
  // On success the panel's own state line says what happened; no second message.
  backTo(form.data.invoice_id, result.ok ? undefined : `apply.${result.code}`);
}

/** Discard (a proposal) and Cancel (a generation) are the same close; only the words differ. */
async function close(formData: FormData, verb: "discard" | "cancel"): Promise<void> {
  const actor = await requireActor();
  const form = LeaseForm.safeParse(formData);
  if (!form.success) backTo(field(formData, "invoice_id"), `${verb}.lease_not_found`);
  const result = await cancelLease(await getDb(), actor.id, form.data.lease_id, inngestDispatch);
  backTo(form.data.invoice_id, result.ok ? undefined : `${verb}.${result.code}`);
}

export async function discardAction(formData: FormData): Promise<void> {
  return close(formData, "discard");
}

export async function cancelAction(formData: FormData): Promise<void> {
  return close(formData, "cancel");
}

const EditForm = formOf(
  z.object({
    invoice_id: id,
    number: text().max(1000),
    counterparty: text().max(1000),
    issued_on: text().max(100),
    due_on: text().max(100),
    expected_version: z.coerce.number().pipe(positiveInt4),
  }),
);

type EditFields = "number" | "counterparty" | "issued_on" | "due_on";
export type EditResult = { ok: boolean; message: string | null; values?: Record<EditFields, string> };

/**
 * Saved (or nothing to save): back to the page, like the other actions. Refused: the form's
 * state, with what was typed, so nothing is lost; with JavaScript off React renders that
 * state into the page the post answers with.
 */
export async function editInvoiceAction(_previous: EditResult, formData: FormData): Promise<EditResult> {
  const actor = await requireActor();
  const locale = localeFrom((await headers()).get("accept-language"));
  const pattern = datePattern(locale);
  const form = EditForm.safeParse(formData);
  if (!form.success) return { ok: false, message: editRefusal("invalid_request", pattern) };
  const { invoice_id, expected_version, ...values } = form.data;
  const db = await getDb();
  const current = await getInvoice(db, actor.id, invoice_id);
  if (!current) return { ok: false, message: editRefusal("invoice_not_found") };

  // Dates arrive as the viewer's locale writes them (or ISO); an unreadable one is refused.
  const issued = parseDate(values.issued_on, locale);
  const due = parseDate(values.due_on, locale);
  if (!issued || !due) return { ok: false, message: editRefusal("invalid_request", pattern), values };
  const typed = { number: values.number.trim(), counterparty: values.counterparty.trim(), issued_on: issued, due_on: due };

  // Only the fields that differ: saving an untouched form must not bump the version, which
  // would withdraw a summary waiting to be applied.
  const shown = { number: current.number, counterparty: current.counterparty, issued_on: current.issuedOn, due_on: current.dueOn };
  const changed = Object.fromEntries(Object.entries(typed).filter(([key, value]) => value !== shown[key as EditFields]));
  if (Object.keys(changed).length === 0) backTo(invoice_id, "edit.unchanged");
  const patch = InvoicePatch.safeParse({ ...changed, expected_version });
  if (!patch.success) return { ok: false, message: editRefusal("invalid_request", pattern), values };
  const result = await updateInvoice(db, actor.id, invoice_id, patch.data, inngestDispatch);
  if (!result.ok) return { ok: false, message: editRefusal(result.code, pattern), values };
  backTo(invoice_id, "edit.saved");
}
