import "server-only";
import { and, eq, inArray, sql } from "drizzle-orm";
import { hashPassword } from "@/lib/password";
import type { Db } from "./client";
import { DEMO_USERS, demoPassword } from "./demo";
import { appUser, invoice, invoiceChange, invoiceLine, membership, organization } from "./schema";

type SeedInvoice = {
  number: string;
  counterparty: string;
  currency: string;
  issuedOn: string;
  dueOn: string;
  lines: { description: string; quantity: number; unitPriceCents: number }[];
};

const DEMO: { email: string; name: string; org: string; role: "admin" | "approver" | "member"; invoices: SeedInvoice[] }[] = [
  {
    ...DEMO_USERS[0],
    invoices: [
      {
        number: "INV-2026-0142",
        counterparty: "Northwind Traders",
        currency: "EUR",
        issuedOn: "2026-11-02",
        dueOn: "2026-12-02",
        lines: [
          { description: "Quarterly bookkeeping retainer", quantity: 1, unitPriceCents: 450000 },
          { description: "Payroll run (per employee)", quantity: 38, unitPriceCents: 1200 },
          { description: "VAT return preparation", quantity: 1, unitPriceCents: 85000 },
        ],
      },
      {
        number: "INV-2026-0155",
        counterparty: "Contoso Logistics",
        currency: "USD",
        issuedOn: "2026-11-10",
        dueOn: "2026-12-10",
        lines: [
          { description: "Pallet storage, November", quantity: 120, unitPriceCents: 1850 },
          { description: "Outbound freight handling", quantity: 14, unitPriceCents: 9500 },
        ],
      },
      {
        number: "INV-2026-0161",
        counterparty: "Fabrikam Office Supply",
        currency: "EUR",
        issuedOn: "2026-11-18",
        dueOn: "2026-12-18",
        lines: [
          { description: "Printer toner, black", quantity: 12, unitPriceCents: 6490 },
          { description: "A4 paper, 80 g (box of 5 reams)", quantity: 30, unitPriceCents: 2199 },
          { description: "Desk chairs", quantity: 4, unitPriceCents: 18900 },
          { description: "Delivery", quantity: 1, unitPriceCents: 2500 },
        ],
      },
    ],
  },
  {
    ...DEMO_USERS[1],
    invoices: [
      {
        number: "INV-2026-0201",
        counterparty: "Tailspin Aviation Services",
        currency: "GBP",
        issuedOn: "2026-11-05",
        dueOn: "2026-12-05",
        lines: [
          { description: "Hangar rental, November", quantity: 1, unitPriceCents: 780000 },
          { description: "Ground power unit hours", quantity: 22, unitPriceCents: 4500 },
        ],
      },
      {
        number: "INV-2026-0207",
        counterparty: "Litware Software",
        currency: "USD",
        issuedOn: "2026-11-12",
        dueOn: "2026-12-12",
        lines: [
          { description: "Accounting suite licences (annual)", quantity: 25, unitPriceCents: 32000 },
          { description: "Implementation workshop", quantity: 2, unitPriceCents: 140000 },
        ],
      },
      {
        number: "INV-2026-0213",
        counterparty: "Adventure Works Catering",
        currency: "EUR",
        issuedOn: "2026-11-20",
        dueOn: "2026-12-04",
        lines: [
          { description: "Year-end team lunch", quantity: 42, unitPriceCents: 3800 },
          { description: "Service charge", quantity: 1, unitPriceCents: 15960 },
        ],
      },
    ],
  },
  {
    ...DEMO_USERS[2],
    invoices: [
      {
        number: "INV-2026-0170",
        counterparty: "Wide World Importers",
        currency: "USD",
        issuedOn: "2026-11-21",
        dueOn: "2026-12-21",
        lines: [
          { description: "Customs brokerage, November", quantity: 6, unitPriceCents: 27500 },
          { description: "Document courier", quantity: 3, unitPriceCents: 4200 },
        ],
      },
    ],
  },
  {
    ...DEMO_USERS[3],
    invoices: [
      {
        number: "INV-2026-0174",
        counterparty: "Proseware Consulting",
        currency: "EUR",
        issuedOn: "2026-11-24",
        dueOn: "2026-12-08",
        lines: [
          { description: "Audit preparation, days", quantity: 3, unitPriceCents: 96000 },
          { description: "Travel", quantity: 1, unitPriceCents: 18400 },
        ],
      },
      {
        number: "INV-2026-0178",
        counterparty: "Coho Winery",
        currency: "EUR",
        issuedOn: "2026-11-26",
        dueOn: "2026-12-26",
        lines: [{ description: "Client gifts, year end", quantity: 24, unitPriceCents: 2850 }],
      },
    ],
  },
];

/**
 * The demo organization named `name`, made if missing. A demo user from before organizations
 * (a database migrated from then) sits alone in an organization of their own: they are moved
 * here with their invoices, so an old development database shows the team too.
 */
async function demoOrg(tx: Parameters<Parameters<Db["transaction"]>[0]>[0], name: string): Promise<string> {
  const [found] = await tx.select({ id: organization.id }).from(organization).where(eq(organization.name, name)).limit(1);
  if (found) return found.id;
  const [made] = await tx.insert(organization).values({ name }).returning({ id: organization.id });
  return made!.id;
}

/** Loads the demo organizations, users and invoices; does nothing for a user who already belongs to their demo organization. */
export async function seedDemo(db: Db, password: string = demoPassword()): Promise<{ created: string[] }> {
  const created: string[] = [];
  const passwordHash = await hashPassword(password);
  for (const user of DEMO) {
    await db.transaction(async (tx) => {
      const orgId = await demoOrg(tx, user.org);
      const [row] = await tx
        .insert(appUser)
        .values({ email: user.email, name: user.name, passwordHash })
        .onConflictDoNothing({ target: appUser.email })
        .returning({ id: appUser.id });
      if (!row) {
        await adoptIntoDemoOrg(tx, user.email, orgId, user.role);
        return;
      }
      created.push(user.email);
      await tx.insert(membership).values({ orgId, userId: row.id, role: user.role });
      for (const inv of user.invoices) {
        const totalCents = inv.lines.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0);
        const [invRow] = await tx
          .insert(invoice)
          .values({ ...inv, ownerId: row.id, orgId, totalCents })
          .returning({ id: invoice.id, version: invoice.version });
        await tx.insert(invoiceLine).values(inv.lines.map((line, position) => ({ ...line, position, invoiceId: invRow!.id })));
        await tx.insert(invoiceChange).values({ invoiceId: invRow!.id, actorId: row.id, kind: "created", version: invRow!.version });
      }
    });
  }
  return { created };
}

/**
 * A demo user who exists but is not in their demo organization: one migrated from before
 * organizations, alone in one named after them. They, their invoices and their sessions move
 * to the demo organization, which that lone organization is then left without.
 */
async function adoptIntoDemoOrg(tx: Parameters<Parameters<Db["transaction"]>[0]>[0], email: string, orgId: string, role: string) {
  const [user] = await tx.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, email));
  if (!user) return;
  const [already] = await tx
    .select({ orgId: membership.orgId })
    .from(membership)
    .where(and(eq(membership.userId, user.id), eq(membership.orgId, orgId)));
  if (already) return;
  const lone = await tx
    .select({ orgId: membership.orgId })
    .from(membership)
    .where(
      and(
        eq(membership.userId, user.id),
        sql`not exists (select 1 from membership other where other.org_id = "membership"."org_id" and other.user_id <> ${user.id})`,
      ),
    );
  const loneIds = lone.map((l) => l.orgId);
  await tx
    .insert(membership)
    .values({ orgId, userId: user.id, role: role as "admin" })
    .onConflictDoNothing();
  await tx.execute(sql`update app_session set org_id = ${orgId} where user_id = ${user.id}`);
  if (loneIds.length === 0) return;
  await tx
    .update(invoice)
    .set({ orgId })
    .where(and(eq(invoice.ownerId, user.id), inArray(invoice.orgId, loneIds)));
  await tx.delete(membership).where(and(eq(membership.userId, user.id), inArray(membership.orgId, loneIds)));
  // The lone organization goes too, unless something of it is left (another owner's invoice).
  await tx
    .delete(organization)
    .where(and(inArray(organization.id, loneIds), sql`not exists (select 1 from invoice i where i.org_id = "organization"."id")`));
}

/** The email of load actor `n` (1-based), as seedActors makes it. */
export const loadActorEmail = (n: number) => `load-${String(n).padStart(4, "0")}@example.test`;

/**
 * Load-test actors (`npm run db:seed -- --actors N`): load-0001@example.test and on, each
 * owning `invoicesEach` invoices made from the demo's. Like seedDemo, an actor who already
 * exists is left as is, so a larger N only adds the missing ones.
 */
export async function seedActors(
  db: Db,
  count: number,
  opts: { password?: string; invoicesEach?: number } = {},
): Promise<{ created: number }> {
  const invoicesEach = opts.invoicesEach ?? 3;
  const templates = DEMO.flatMap((u) => u.invoices);
  const passwordHash = await hashPassword(opts.password ?? demoPassword());
  let created = 0;
  for (let n = 1; n <= count; n++) {
    await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(appUser)
        .values({ email: loadActorEmail(n), name: `Load Actor ${n}`, passwordHash })
        .onConflictDoNothing({ target: appUser.email })
        .returning({ id: appUser.id });
      if (!row) return;
      created++;
      for (let k = 0; k < invoicesEach; k++) {
        const { lines, ...inv } = templates[(n + k) % templates.length]!;
        const totalCents = lines.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0);
        const [invRow] = await tx
          .insert(invoice)
          .values({ ...inv, number: `LD-${String(n).padStart(4, "0")}-${k + 1}`, ownerId: row.id, totalCents })
          .returning({ id: invoice.id });
        await tx.insert(invoiceLine).values(lines.map((line, position) => ({ ...line, position, invoiceId: invRow!.id })));
      }
    });
  }
  return { created };
}

export async function demoUserExists(db: Db): Promise<boolean> {
  const rows = await db.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, DEMO[0]!.email));
  return rows.length > 0;
}
