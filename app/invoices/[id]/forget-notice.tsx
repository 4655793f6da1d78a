"use client";
// An action's notice arrives in the address (?notice=...), so that it works as a plain form
// post too. Once the page shows it, it leaves the address: a reload does not say it again.
// Without JavaScript it stays, and a reload repeats the words (never the action).
import { useEffect } from "react";

export function ForgetNotice({ notice }: { notice: string | undefined }) {
  useEffect(() => {
    if (!notice) return;
    const url = new URL(window.location.href);
    if (!url.searchParams.has("notice")) return;
    url.searchParams.delete("notice");
    window.history.replaceState(null, "", url);
  }, [notice]);
  return null;
}
