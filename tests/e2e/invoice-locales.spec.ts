// The edit form in browsers whose locale counts years in another calendar (an outside review,
// 2026-12-01):
// a Thai browser was shown 01/11/2569, a Persian one 1405/08/10, an Ethiopic one 22/02/2019,
// and a save either was refused or rewrote both dates. Each locale: the stored days prefilled
// in the Gregorian calendar, a counterparty-only save leaves the dates as they were, and a date
// typed the locale's way is saved as that day.
import { expect, test } from "./support/fixtures";
import { InvoicePage } from "./support/pages";
import { ALICE } from "./support/settings";

/** The invoice's issue and due dates (2026-11-01, 2026-12-01) and 2026-12-24, as each locale writes them. */
const LOCALES: Record<string, [issued: string, due: string, christmasEve: string]> = {
  "th-TH": ["01/11/2026", "01/12/2026", "24/12/2026"],
  "fa-IR": ["2026/11/01", "2026/12/01", "2026/12/24"],
  "am-ET-u-ca-ethiopic": ["01/11/2026", "01/12/2026", "24/12/2026"],
  "ja-JP-u-ca-japanese": ["2026/11/01", "2026/12/01", "2026/12/24"],
  "de-DE": ["01.11.2026", "01.12.2026", "24.12.2026"],
  "en-US": ["11/01/2026", "12/01/2026", "12/24/2026"],
};

for (const [locale, [issued, due, christmasEve]] of Object.entries(LOCALES)) {
  test.describe(`in ${locale}`, () => {
    test.use({ locale });

    test("the form shows the stored days; a counterparty-only save keeps the dates; a typed date is that day", async ({
      page,
      context,
      sql,
      signIn,
      newInvoice,
    }) => {
      const invoice = await newInvoice(ALICE);
      await signIn(context, ALICE);
      const inv = new InvoicePage(page);
      const sent = page.waitForRequest((r) => r.url().endsWith(`/invoices/${invoice.id}`));
      await inv.goto(invoice.id);
      // The server sees the locale as a browser set to it sends it.
      expect((await sent).headers()["accept-language"]).toMatch(new RegExp(`^${locale}\\b`));
      const stored = async () =>
        (
          await sql<{ counterparty: string; issued_on: string; due_on: string }[]>`
            select counterparty, to_char(issued_on, 'YYYY-MM-DD') as issued_on, to_char(due_on, 'YYYY-MM-DD') as due_on
            from invoice where id = ${invoice.id}`
        )[0];

      // Soft: on a wrong prefill, the save below still shows what it does to the stored dates.
      await expect.soft(page.getByTestId("issued-on")).toHaveText(issued);
      await expect.soft(page.getByTestId("due-on")).toHaveText(due);
      await expect.soft(inv.editForm.getByLabel("Issued on")).toHaveValue(issued);
      await expect.soft(inv.editForm.getByLabel("Due on")).toHaveValue(due);

      await inv.editCounterparty("Contoso");
      expect(await stored()).toEqual({ counterparty: "Contoso", issued_on: "2026-11-01", due_on: "2026-12-01" });
      await expect(inv.editForm.getByLabel("Issued on")).toHaveValue(issued);

      await inv.editForm.getByLabel("Due on").fill(christmasEve);
      await inv.editForm.getByRole("button", { name: "Save changes" }).click();
      // "Changes saved." is still shown from the first save: the new date on the page says this one is done.
      await expect(page.getByTestId("due-on")).toHaveText(christmasEve);
      await expect(inv.editForm.getByRole("status")).toHaveText("Changes saved.");
      expect(await stored()).toEqual({ counterparty: "Contoso", issued_on: "2026-11-01", due_on: "2026-12-24" });
      await expect(inv.editForm.getByLabel("Due on")).toHaveValue(christmasEve);
      await expect(inv.editForm.getByLabel("Issued on")).toHaveValue(issued);
      // Shown once: a reload does not say "Changes saved." again.
      await expect(page).toHaveURL(new RegExp(`/invoices/${invoice.id}$`));
    });
  });
}
