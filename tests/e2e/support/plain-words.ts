// The rules a finance user's words keep, shared by the unit test of every sentence
// (tests/unit/lease-words.test.ts) and the pages' rendered text (finance-words.spec.ts).
// Dependency-free, so the unit project imports it without Playwright.

/** Words of the machinery behind the page, which a finance user should never have to read. */
export const DEVELOPER_WORDS =
  /\b(lease|leases|SEED_PASSWORD|PGlite|PostgreSQL|Inngest|server action|stream|streaming|SSE|polling|push|model|API|HTTP|JSON|null|undefined|NaN|status code|token|session id|Connecting for updates|Updates arrive as they happen)\b/i;

// Short and common words repeat in any sentence; a name ("Alice Martin") is not the writer's word.
const IGNORED = new Set(["that", "this", "with", "nothing", "invoice", "invoice's", "their", "them", "they", "your", "from", "been"]);

/** How near a word may come again: "Review ready for review" (3 apart), "A review by Alice Martin waits for their review" (7). */
const WINDOW = 8;

/**
 * The first word a sentence says twice within WINDOW words ("review" in "Review ready for
 * review"), or null. A sentence ends at a full stop, a colon, a semicolon or a line break, so
 * a panel's separate sentences are judged apart.
 */
export function doubledWord(text: string): { word: string; sentence: string } | null {
  for (const sentence of text.split(/[.;:·—]\s+|[.;:]$|\n+/)) {
    const words = (sentence.match(/[A-Za-z']+/g) ?? []).map((w) => w.toLowerCase());
    for (const [i, word] of words.entries()) {
      if (word.length < 4 || IGNORED.has(word)) continue;
      if (words.slice(i + 1, i + 1 + WINDOW).includes(word)) return { word, sentence: sentence.trim() };
    }
  }
  return null;
}
