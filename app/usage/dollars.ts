// An amount as a person types it into the budget form, in US dollars: "25", "25.5", "$25.50",
// "1,000" → whole cents; blank → null (no cap); anything else (a comma for decimals, three
// decimals, a minus sign, words) → undefined, for the form to refuse beside its field.
const DOLLARS = /^\$?\s*(\d{1,12})(?:\.(\d{1,2}))?$/;

export function centsOf(typed: string | undefined): number | null | undefined {
  // Thousands separators only where three digits follow ("1,000", not "25,50").
  const value = (typed ?? "").trim().replaceAll(/(?<=\d),(?=\d{3}(?:\D|$))/g, "");
  if (value === "") return null;
  const match = DOLLARS.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
}

/** Whole cents as the form shows them: "25.00", blank for no cap. */
export const dollarsOf = (cents: number | null) => (cents === null ? "" : (cents / 100).toFixed(2));
