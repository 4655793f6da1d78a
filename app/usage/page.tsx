import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { purposeOf } from "@/lib/purposes";
import { readBudget, usageView, type Caps } from "@/lib/spend";
import { requireActor } from "@/app/_lib/actor";
import { formatDate, formatDateTime, formatSpend } from "@/app/_lib/format";
import { BUDGET_WORDS, CAP_LABELS, CAP_ORDER, isBudgetNotice, OUTCOME_WORDS } from "@/app/_lib/usage-words";
import { getViewer } from "@/app/_lib/viewer";
import { BudgetForm } from "./budget-form";
import { dollarsOf } from "./dollars";
import { isPurpose } from "@/lib/purposes";

export const metadata: Metadata = { title: "Usage" };

type Search = Promise<Record<string, string | string[] | undefined>>;
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const purposeTitle = (code: string) => (isPurpose(code) ? purposeOf(code).title : code);

// The Usage page: what the AI requests cost, today and this month (UTC days, the database's
// clock), per day, per purpose and call by call with the invoice behind each. An admin reads the
// organization's and each member's and sets the budget; a member reads their own and the caps.
// Everything comes from one statement (lib/spend usageView) that judges the admin role itself.
export default async function UsagePage({ searchParams }: { searchParams: Search }) {
  const actor = await requireActor();
  const params = await searchParams;
  const db = await getDb();
  const viewer = await getViewer();
  const before = first(params.before) ?? null;
  const [view, caps] = await Promise.all([usageView(db, actor, before), readBudget(db, actor)]);
  if (!view) return <p>You are no longer a member of this team.</p>;
  const money = (cents: number) => formatSpend(cents, viewer.locale);
  const whole = view.scope === "organization";
  const notice = first(params.notice);
  return (
    <div className="usage">
      <h1>Usage</h1>
      <p className="muted">
        {whole ? `AI requests of everyone at ${actor.orgName}` : "Your own AI requests"}. Days and months are counted in UTC; this month
        began {formatDate(view.month_start.slice(0, 10), viewer.locale)}.
      </p>
      {isBudgetNotice(notice) ? (
        <p role="status" className="notice notice--ok" data-testid="usage-notice">
          {BUDGET_WORDS[notice]}
        </p>
      ) : null}

      <section className="card" aria-labelledby="spend-heading">
        <h2 id="spend-heading">{whole ? "Team spend" : "Your spend"}</h2>
        <dl className="facts" data-testid="spend">
          <div>
            <dt>Today</dt>
            <dd data-testid="spend-day">{money(view.spent.day_cents)}</dd>
          </div>
          <div>
            <dt>This month</dt>
            <dd data-testid="spend-month">{money(view.spent.month_cents)}</dd>
          </div>
          {whole ? (
            <div>
              <dt>Yours this month</dt>
              <dd>{money(view.me.month_cents)}</dd>
            </div>
          ) : null}
        </dl>
      </section>

      {view.members ? (
        <section className="card" aria-labelledby="members-spend-heading">
          <h2 id="members-spend-heading">By member</h2>
          <div className="table-wrap">
            <table data-testid="members-spend">
              <Head columns={["Member", { label: "Today", num: true }, { label: "This month", num: true }]} />
              <tbody>
                {view.members.map((m) => (
                  <tr key={m.user_id}>
                    <th scope="row">
                      {m.name}
                      {m.user_id === actor.id ? " (you)" : ""}
                    </th>
                    <td className="num">{money(m.day_cents)}</td>
                    <td className="num">{money(m.month_cents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}

      <section className="card" aria-labelledby="budget-heading">
        <h2 id="budget-heading">Budget</h2>
        {whole ? (
          <BudgetForm shown={Object.fromEntries(CAP_ORDER.map((f) => [f, dollarsOf(caps[f])])) as Record<keyof Caps, string>} />
        ) : (
          <>
            <p className="muted small">Only an admin can change the budget. A request over a limit is not started.</p>
            <dl className="facts" data-testid="budget-caps">
              {CAP_ORDER.map((field) => (
                <div key={field}>
                  <dt>{CAP_LABELS[field]}</dt>
                  <dd>{caps[field] === null ? "No limit" : money(caps[field])}</dd>
                </div>
              ))}
            </dl>
          </>
        )}
      </section>

      <section className="card" aria-labelledby="days-heading">
        <h2 id="days-heading">By day, this month</h2>
        {view.by_day.length === 0 ? (
          <p className="muted">Nothing spent this month.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="by-day">
              <Head columns={["Day (UTC)", { label: "Requests", num: true }, { label: "Cost", num: true }]} />
              <tbody>
                {view.by_day.map((d) => (
                  <tr key={d.day}>
                    <th scope="row">{formatDate(d.day, viewer.locale)}</th>
                    <td className="num">{d.calls}</td>
                    <td className="num">{money(d.cost_cents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="purposes-heading">
        <h2 id="purposes-heading">By task, this month</h2>
        {view.by_purpose.length === 0 ? (
          <p className="muted">Nothing spent this month.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="by-purpose">
              <Head
                columns={["Task", { label: "Requests", num: true }, { label: "Today", num: true }, { label: "This month", num: true }]}
              />
              <tbody>
                {view.by_purpose.map((p) => (
                  <tr key={p.purpose}>
                    <th scope="row">{purposeTitle(p.purpose)}</th>
                    <td className="num">{p.calls}</td>
                    <td className="num">{money(p.day_cents)}</td>
                    <td className="num">{money(p.month_cents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="calls-heading">
        <h2 id="calls-heading">Requests, newest first</h2>
        {view.calls.length === 0 ? (
          <p className="muted">{before ? "No older requests." : "No AI requests yet."}</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="calls">
              <Head
                columns={[
                  "When",
                  ...(whole ? ["Who"] : []),
                  "Task",
                  "Invoice",
                  { label: "Tokens in", num: true },
                  { label: "Tokens out", num: true },
                  "Model",
                  "How it ended",
                  { label: "Cost", num: true },
                ]}
              />
              <tbody>
                {view.calls.map((call, index) => (
                  <tr key={`${call.at}-${index}`} data-testid="call" data-invoice-id={call.invoice_id}>
                    <td>{formatDateTime(call.at, viewer)}</td>
                    {whole ? <td>{call.mine ? `${call.actor_name} (you)` : call.actor_name}</td> : null}
                    <td>{purposeTitle(call.purpose)}</td>
                    <td>
                      {call.invoice_number === null ? (
                        <span className="muted">No longer on the team</span>
                      ) : (
                        // Your own request opens at its attempt in the invoice's history; another
                        // member's at the history, since their lease id is theirs alone.
                        <Link href={`/invoices/${call.invoice_id}#${call.lease_id ? `attempt-${call.lease_id}` : "history-heading"}`}>
                          {call.invoice_number}
                        </Link>
                      )}
                    </td>
                    <td className="num">
                      {call.input_tokens.toLocaleString(viewer.locale)}
                      {call.estimated ? "*" : ""}
                    </td>
                    <td className="num">
                      {call.output_tokens.toLocaleString(viewer.locale)}
                      {call.estimated ? "*" : ""}
                    </td>
                    <td>{call.model}</td>
                    <td>{OUTCOME_WORDS[call.outcome] ?? call.outcome}</td>
                    <td className="num">{money(call.cost_cents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {view.calls.some((c) => c.estimated) ? <p className="muted small">* Estimated by us: the AI service did not report it.</p> : null}
        <nav className="actions" aria-label="Pages of requests">
          {before ? <Link href="/usage#calls-heading">Newest requests</Link> : null}
          {view.older ? <Link href={`/usage?before=${encodeURIComponent(view.older)}#calls-heading`}>Older requests</Link> : null}
        </nav>
      </section>
    </div>
  );
}

/** A table's header row: each column a label, a number column right-aligned. */
function Head({ columns }: { columns: (string | { label: string; num: true })[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) =>
          typeof c === "string" ? (
            <th key={c} scope="col">
              {c}
            </th>
          ) : (
            <th key={c.label} scope="col" className="num">
              {c.label}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}
