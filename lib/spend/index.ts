// Spend, counted and capped: every model call's usage and cost (record.ts, price.ts), each
// organization's caps and open's check against them (budget.ts), and what was spent (usage.ts).
export * from "./budget";
export * from "./price";
export * from "./record";
export * from "./usage";
