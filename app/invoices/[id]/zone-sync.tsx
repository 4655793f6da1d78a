"use client";
// Browsers send no time zone, so the first render shows times in UTC (and says so). Once the
// page runs, this stores the browser's zone in a cookie and re-renders the page in it; later
// visits are right from the first byte. Without JavaScript times stay in UTC, labelled so.
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { ZONE_COOKIE } from "@/app/_lib/zone";

export function ZoneSync({ zone }: { zone: string }) {
  const router = useRouter();
  useEffect(() => {
    const mine = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!mine || mine === zone) return;
    const stored = document.cookie
      .split("; ")
      .find((c) => c.startsWith(`${ZONE_COOKIE}=`))
      ?.slice(ZONE_COOKIE.length + 1);
    // Already stored and still not used: the server does not know this zone. Once is enough.
    if (stored && decodeURIComponent(stored) === mine) return;
    document.cookie = `${ZONE_COOKIE}=${encodeURIComponent(mine)}; path=/; max-age=31536000; samesite=lax`;
    router.refresh();
  }, [zone, router]);
  return null;
}
