"use client";
// An action's notice arrives in the address (?notice=...), so that it works as a plain form
// post too. Once the page shows it, it leaves the address: a reload does not say it again.
// Without JavaScript it stays, and a reload repeats the words (never the action).
import { useEffect } from "react";

export function ForgetNotice({ notice }: { notice: string | undefined }) {
  // After every render, not only when the notice changes: a second save in a row arrives with
  // the same notice as the first, and its address must lose it too.
  useEffect(() => {
    if (!notice) return;
    const url = new URL(window.location.href);
    if (!url.searchParams.has("notice")) return;
    // The budget refusal's details (which cap, when it resets) go with it.
    for (const name of ["notice", "cap", "resets"]) url.searchParams.delete(name);
    window.history.replaceState(null, "", url);
  });
  return null;
}
