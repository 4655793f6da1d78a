// The lease module: every write of inference_lease and lease_event lives under lib/leases/
// (eslint.config.mjs holds the rest of the code to that). Each transition is one conditional
// UPDATE, or a row lock, inside a short transaction that also writes its lease_event, and every
// deadline comparison is made by the database clock, `now()`.
export * from "./types";
export * from "./open";
export * from "./read";
export * from "./timeline";
export * from "./generate";
export * from "./apply";
export * from "./close";
export * from "./approval";
export * from "./receipt";
export * from "./notice";
export * from "./cursor";
export { isPurpose } from "./shared";
