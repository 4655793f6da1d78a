// The password every test user is made with (tests/support/db.ts's makeUser), so a client of
// the built app can sign in as any of them.
export const PASSWORD = "correct horse battery staple";
