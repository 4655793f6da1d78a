// Found by an outside review (2026-12-01): someone who guesses at a user's email must not keep
// that user out. The
// sign-in page's form (a server action, not POST /api/session) without JavaScript: the browser
// the user signed in on before carries a device cookie and still gets in; a fresh one is
// refused until the block ends. (The JSON route, the token's own limit and forged cookies:
// tests/integration/sessions/session-security.test.ts.)
import { expect, test } from "./support/fixtures";
import { newUser } from "./support/list-data";
import { SignInPage } from "./support/pages";
import { DEMO_PASSWORD } from "./support/settings";

test.use({ javaScriptEnabled: false });

test("ten wrong passwords from a stranger: the user's own browser signs in through the form, a fresh browser is told to wait", async ({
  page,
  context,
  browser,
  baseURL,
  playwright,
  sql,
}) => {
  const user = await newUser(sql, "Dana Device");
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn(user.email);
  const device = (await context.cookies()).find((c) => c.name === "claimcheck_device");
  expect(device, "signing in through the form sets a device cookie").toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(/\/sign-in\?signed-out=1/);

  // A stranger, with no cookie at all, guesses until the email is locked.
  const stranger = await playwright.request.newContext({ baseURL });
  try {
    for (let i = 0; i < 10; i++) {
      const res = await stranger.post("/api/session", { data: { email: user.email, password: `guess-${i}` } });
      expect(res.status(), `guess ${i + 1}`).toBe(401);
    }
    expect((await stranger.post("/api/session", { data: { email: user.email, password: DEMO_PASSWORD } })).status()).toBe(429);
  } finally {
    await stranger.dispose();
  }

  // The user's own browser: in, through the form.
  await signIn.goto();
  await signIn.signIn(user.email);

  // A browser that never signed in as them: refused, in words, even with the right password.
  const fresh = await browser.newContext({ baseURL, javaScriptEnabled: false });
  try {
    const elsewhere = new SignInPage(await fresh.newPage());
    await elsewhere.goto();
    await elsewhere.email.fill(user.email);
    await elsewhere.password.fill(DEMO_PASSWORD);
    await elsewhere.submit.click();
    await expect(elsewhere.alert).toHaveText(/^Too many attempts\. Try again in \d+ minutes?\.$/);
    expect((await fresh.cookies()).map((c) => c.name)).toEqual([]);
  } finally {
    await fresh.close();
  }
});
