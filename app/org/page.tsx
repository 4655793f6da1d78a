import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { taskTitle } from "@/lib/approvals/read";
import { may } from "@/lib/access";
import { canonicalId } from "@/lib/ids";
import { listInvitations, listMembers } from "@/lib/members";
import { ROLES } from "@/lib/org-codes";
import { requireActor } from "@/app/_lib/actor";
import { formatDateTime } from "@/app/_lib/format";
import { isMemberNotice, MEMBER_WORDS, ROLE_WORDS } from "@/app/_lib/member-words";
import { getViewer } from "@/app/_lib/viewer";
import { SubmitButton } from "@/app/_components/submit-button";
import { readPolicies } from "@/lib/approvals/policy";
import { APPLY_POLICIES, REVIEW_HOURS } from "@/lib/lease-codes";
import { isPolicyNotice, POLICY_CHOICE_WORDS, POLICY_WORDS } from "@/app/_lib/approval-words";
import { changeRoleAction, removeMemberAction, revokeInvitationAction, savePolicyAction } from "./actions";
import { InviteForm } from "./invite-form";

export const metadata: Metadata = { title: "Team" };

type Search = Promise<Record<string, string | string[] | undefined>>;
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const GOOD = new Set(["invited", "revoked", "role_changed", "removed"]);

// The Team page: everyone reads who is on the team; an admin changes roles, removes people (with
// a confirm step: ?remove=<id>, a plain link), invites and withdraws invitations. Every control
// is a form posting to a server action, so it all works without JavaScript.
export default async function TeamPage({ searchParams }: { searchParams: Search }) {
  const actor = await requireActor();
  const params = await searchParams;
  const db = await getDb();
  const viewer = await getViewer();
  const members = await listMembers(db, actor);
  const manages = may(actor, "manage_members");
  const invitations = manages ? await listInvitations(db, actor) : null;
  const policies = await readPolicies(db, actor);
  const setsPolicy = may(actor, "set_policy");
  const policyNotice = first(params.policy);
  const policyPurpose = first(params.purpose);
  // Who could approve a request besides its requester: approvers, and admins (ROLE_RULES.approve).
  const approvers = members.filter((m) => m.role === "approver" || m.role === "admin");
  const notice = first(params.notice);
  // `?remove=` as the database spells ids: the same member in upper case gets the same confirm step.
  const remove = canonicalId(first(params.remove));
  const removing = manages && remove ? members.find((m) => m.id === remove) : undefined;
  return (
    <div className="team">
      <h1>Team</h1>
      <p className="muted">
        {actor.orgName} · you are {ROLE_WORDS[actor.role].toLowerCase()}
        {manages ? "" : ". Only an admin can change the team."}
      </p>
      {isMemberNotice(notice) ? (
        <p
          role={GOOD.has(notice) ? "status" : "alert"}
          className={`notice ${GOOD.has(notice) ? "notice--ok" : "notice--error"}`}
          data-testid="team-notice"
        >
          {MEMBER_WORDS[notice]}
        </p>
      ) : null}

      {removing ? (
        <section className="card" aria-labelledby="confirm-remove">
          <h2 id="confirm-remove">Remove {removing.name}?</h2>
          <p>
            {removing.id === actor.id
              ? "You will be signed out and lose access to the team's invoices."
              : `${removing.name} will be signed out everywhere and lose access to the team's invoices.`}{" "}
            Summaries they are waiting on are stopped. Their invoices stay with the team.
          </p>
          <form action={removeMemberAction} className="actions">
            <input type="hidden" name="member_id" value={removing.id} />
            <SubmitButton className="button button--danger" pendingLabel="Removing…">
              Remove {removing.name}
            </SubmitButton>
            <Link href="/org" className="button button--quiet">
              Keep them
            </Link>
          </form>
        </section>
      ) : null}

      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <ul className="member-list">
          {members.map((m) => (
            <li key={m.id} className="card member" data-testid="member">
              <p>
                <strong>{m.name}</strong>
                {m.id === actor.id ? " (you)" : ""} · <span className="muted">{m.email}</span> ·{" "}
                <span data-testid="member-role">{ROLE_WORDS[m.role]}</span>
              </p>
              {manages ? (
                <div className="actions">
                  <form action={changeRoleAction} className="actions">
                    <input type="hidden" name="member_id" value={m.id} />
                    <label htmlFor={`role-${m.id}`} className="visually-hidden">
                      Role of {m.name}
                    </label>
                    <select id={`role-${m.id}`} name="role" defaultValue={m.role}>
                      {ROLES.map((role) => (
                        <option key={role} value={role}>
                          {ROLE_WORDS[role]}
                        </option>
                      ))}
                    </select>
                    <SubmitButton className="button button--quiet" pendingLabel="Saving…">
                      Change role
                    </SubmitButton>
                  </form>
                  <Link href={`/org?remove=${m.id}`} className="button button--quiet" aria-label={`Remove ${m.name}`}>
                    Remove
                  </Link>
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      </section>

      <section aria-labelledby="policies-heading" className="card" data-testid="policies">
        <h2 id="policies-heading">{POLICY_WORDS.heading}</h2>
        <p className="muted small">{POLICY_WORDS.intro}</p>
        {isPolicyNotice(policyNotice) ? (
          <p
            role={policyNotice === "saved" ? "status" : "alert"}
            className={`notice ${policyNotice === "saved" ? "notice--ok" : "notice--error"}`}
            data-testid="policy-notice"
          >
            {/* "Summary: saved. …", the task named first (one the address names that is none reads as the summary's). */}
            {`${taskTitle(policyPurpose ?? "summarize_invoice")}: ${POLICY_WORDS[policyNotice]}`}
          </p>
        ) : null}
        {approvers.length < 2 && policies.some((p) => p.apply === "four_eyes") ? (
          <p className="notice notice--info" role="note">
            {POLICY_WORDS.noApprover}
          </p>
        ) : null}
        <ul className="member-list">
          {policies.map((policy) => {
            const task = { title: taskTitle(policy.purpose) };
            return (
              <li key={policy.purpose} className="member" data-testid="policy" data-purpose={policy.purpose} data-apply={policy.apply}>
                {setsPolicy ? (
                  <form action={savePolicyAction} className="actions" aria-label={`Approval for ${task.title}`}>
                    <input type="hidden" name="purpose" value={policy.purpose} />
                    <strong>{task.title}</strong>
                    <label htmlFor={`policy-${policy.purpose}`} className="visually-hidden">
                      How {task.title} is saved
                    </label>
                    <select id={`policy-${policy.purpose}`} name="apply" defaultValue={policy.apply}>
                      {APPLY_POLICIES.map((apply) => (
                        <option key={apply} value={apply}>
                          {POLICY_CHOICE_WORDS[apply]}
                        </option>
                      ))}
                    </select>
                    <label htmlFor={`hours-${policy.purpose}`}>{POLICY_WORDS.hours}</label>
                    <input
                      id={`hours-${policy.purpose}`}
                      name="review_hours"
                      type="number"
                      inputMode="numeric"
                      min={REVIEW_HOURS.min}
                      max={REVIEW_HOURS.max}
                      step={1}
                      required
                      defaultValue={policy.review_hours}
                    />
                    <SubmitButton className="button button--quiet" pendingLabel="Saving…">
                      {POLICY_WORDS.save}
                    </SubmitButton>
                  </form>
                ) : (
                  <p>
                    <strong>{task.title}</strong>: {POLICY_CHOICE_WORDS[policy.apply]}
                    {policy.apply === "four_eyes" ? ` (${policy.review_hours} h to decide)` : ""}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
        {setsPolicy ? null : <p className="muted small">{POLICY_WORDS.readOnly}</p>}
      </section>

      {invitations?.ok ? (
        <>
          <section aria-labelledby="invite-heading" className="card">
            <h2 id="invite-heading">Invite someone</h2>
            <InviteForm />
          </section>
          <section aria-labelledby="pending-heading">
            <h2 id="pending-heading">Pending invitations</h2>
            {invitations.invitations.length === 0 ? (
              <p className="muted">No invitations waiting.</p>
            ) : (
              <ul className="member-list">
                {invitations.invitations.map((i) => (
                  <li key={i.id} className="card" data-testid="pending-invitation">
                    <p>
                      <strong>{i.email}</strong> · {ROLE_WORDS[i.role]} ·{" "}
                      <span className="muted">link works until {formatDateTime(i.expiresAt.toISOString(), viewer)}</span>
                    </p>
                    <form action={revokeInvitationAction}>
                      <input type="hidden" name="invitation_id" value={i.id} />
                      <SubmitButton className="button button--quiet" pendingLabel="Withdrawing…">
                        Withdraw invitation to {i.email}
                      </SubmitButton>
                    </form>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </>
      ) : null}
    </div>
  );
}
