"use server";
// The invoice page's actions. Each one: the actor from the session (never from the form),
// the form parsed with zod, one domain call, plain words back, and a refresh of the page so
// what it shows next is what the database now says.
import { refresh } from "next/cache";
import { z } from "zod";
import { getDb } from "@/db/client";
import { appEnv } from "@/lib/env";
import { formOf, positiveInt4, text } from "@/lib/input";
import { getInvoice, InvoicePatch, updateInvoice } from "@/lib/invoices";
import { applyLease, cancelLease, openLease, readLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";
import { requireActor } from "@/app/_lib/actor";
import { applyRefusal, discardRefusal, editRefusal, summarizeRefusal } from "@/app/_lib/lease-words";

export type ActionResult = { ok: boolean; message: string | null };

// Actions are callable by id over HTTP with any arguments: each one parses its FormData
// with formOf, so a missing or foreign argument is a refusal, never a crash.
const id = text().trim().max(100);
const SummarizeForm = formOf(z.object({ invoice_id: id }));
const LeaseForm = formOf(z.object({ lease_id: id }));

export async function summarizeAction(formData: FormData): Promise<ActionResult> {
  const actor = await requireActor();
  const form = SummarizeForm.safeParse(formData);
  if (!form.success) return { ok: false, message: summarizeRefusal("invalid_request") };
  const db = await getDb();
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: form.data.invoice_id,
    purpose: "summarize_invoice",
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  // A second click (or tab) gets the lease already in flight; the database decides.
  const result = await openLease(db, input, inngestDispatch);
  refresh();
  return result.ok ? { ok: true, message: null } : { ok: false, message: summarizeRefusal(result.code) };
}

export async function applyAction(formData: FormData): Promise<ActionResult> {
  const actor = await requireActor();
  const form = LeaseForm.safeParse(formData);
  if (!form.success) return { ok: false, message: applyRefusal("lease_not_found") };
  const db = await getDb();
  const result = await applyLease(db, actor.id, form.data.lease_id);
  refresh();
  // On success the panel's own state line says what happened; no second message.
  if (result.ok) return { ok: true, message: null };
  const lease = result.code === "lease_rejected" ? await readLease(db, actor.id, form.data.lease_id) : null;
  return { ok: false, message: applyRefusal(result.code, lease?.closedReason) };
}

export async function discardAction(formData: FormData): Promise<ActionResult> {
  const actor = await requireActor();
  const form = LeaseForm.safeParse(formData);
  if (!form.success) return { ok: false, message: discardRefusal("lease_not_found") };
  const result = await cancelLease(await getDb(), actor.id, form.data.lease_id, inngestDispatch);
  refresh();
  return result.ok ? { ok: true, message: null } : { ok: false, message: discardRefusal(result.code) };
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

export type EditResult = ActionResult & { values?: Record<"number" | "counterparty" | "issued_on" | "due_on", string> };

export async function editInvoiceAction(_previous: EditResult, formData: FormData): Promise<EditResult> {
  const actor = await requireActor();
  const form = EditForm.safeParse(formData);
  if (!form.success) return { ok: false, message: editRefusal("invalid_request") };
  const { invoice_id, expected_version, ...values } = form.data;
  const db = await getDb();
  const current = await getInvoice(db, actor.id, invoice_id);
  if (!current) return { ok: false, message: editRefusal("invoice_not_found") };

  // Only the fields that differ: saving an untouched form must not bump the version, which
  // would fence off a summary waiting to be applied.
  const shown = { number: current.number, counterparty: current.counterparty, issued_on: current.issuedOn, due_on: current.dueOn };
  const changed = Object.fromEntries(
    Object.entries(values).filter(([key, value]) => value.trim() !== shown[key as keyof typeof shown]),
  );
  if (Object.keys(changed).length === 0) return { ok: true, message: "Nothing to save: no field was changed." };
  const patch = InvoicePatch.safeParse({ ...changed, expected_version });
  if (!patch.success) return { ok: false, message: editRefusal("invalid_request"), values };
  const result = await updateInvoice(db, actor.id, invoice_id, patch.data, inngestDispatch);
  refresh();
  if (!result.ok) return { ok: false, message: editRefusal(result.code), values };
  return { ok: true, message: "Changes saved." };
}
