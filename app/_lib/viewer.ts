import "server-only";
// Who is looking, for formatting: the locale from the browser's Accept-Language and the time
// zone the invoice page's ZoneSync stored in a cookie (browsers send no zone of their own).
// Either one unusable falls back to the defaults, never to an error.
import { cookies, headers } from "next/headers";
import { cache } from "react";
import { DEFAULT_LOCALE, type Viewer } from "./format";
import { ZONE_COOKIE } from "./zone";

/** The first language the browser prefers (by q-value) that Intl can format in. */
export function localeFrom(acceptLanguage: string | null): string {
  const ranked = (acceptLanguage ?? "")
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1",
      );
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.tag && entry.tag !== "*" && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    try {
      const [supported] = Intl.DateTimeFormat.supportedLocalesOf(tag);
      if (supported) return supported;
    } catch {
      // not a well-formed tag: the next one
    }
  }
  return DEFAULT_LOCALE;
}

/** An IANA zone Intl knows ("Europe/Berlin"), else UTC. */
export function zoneFrom(value: string | undefined): string {
  if (!value || value.length > 64) return "UTC";
  try {
    return new Intl.DateTimeFormat("en", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return "UTC";
  }
}

export const getViewer = cache(async (): Promise<Viewer> => {
  const [h, c] = await Promise.all([headers(), cookies()]);
  return { locale: localeFrom(h.get("accept-language")), timeZone: zoneFrom(c.get(ZONE_COOKIE)?.value) };
});
