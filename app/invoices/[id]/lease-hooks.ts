"use client";
// How the lease panel follows its lease: the feed (server-sent events, polling while they
// fail), the check at the deadline, and the countdown by the server's clock. They decide
// nothing: every reading comes from the server, and the later one (by its `server_now`) wins.
import { useEffect, useState } from "react";
import type { Channel, LeaseJson } from "@/app/_lib/lease-words";

export type { Channel };

const POLL_MS = 2_000;
/** An event stream that has not opened by then is given up for polling (and tried again later). */
const SSE_OPEN_TIMEOUT_MS = 5_000;
/** After a fallback to polling, the stream is tried again after 2 s, 4 s, 8 s... at most 30 s apart. */
const SSE_RETRY_FIRST_MS = 2_000;
const SSE_RETRY_MAX_MS = 30_000;
/** After the deadline, the server is asked this soon, then every second until it says. */
const DEADLINE_CHECK_MS = 500;
const DEADLINE_RECHECK_MS = 1_000;

/** The later of two readings of the same lease, by the database clock. */
export function newer(candidate: LeaseJson | null, current: LeaseJson | null): boolean {
  if (!candidate) return false;
  if (!current || candidate.lease_id !== current.lease_id) return true;
  return Date.parse(candidate.server_now) >= Date.parse(current.server_now);
}

/**
 * Follows one lease: EventSource first; when it fails (or never opens), polling GET
 * /api/leases/:id every 2 s while the stream is tried again with backoff; once it opens,
 * polling stops. Every answer replaces the view if it is a later reading.
 */
export function useLeaseFeed(
  leaseId: string | null,
  setView: (update: (current: LeaseJson | null) => LeaseJson | null) => void,
  setChannel: (channel: Channel) => void,
) {
  useEffect(() => {
    if (!leaseId) return;
    let stopped = false;
    let source: EventSource | null = null;
    let pollTimer: ReturnType<typeof setInterval> | undefined;
    let openTimer: ReturnType<typeof setTimeout> | undefined;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let retryDelay = SSE_RETRY_FIRST_MS;
    let polling = false;
    let inFlight = false;
    const url = `/api/leases/${encodeURIComponent(leaseId)}`;

    const accept = (next: LeaseJson) => {
      if (!stopped && next.lease_id === leaseId) setView((current) => (newer(next, current) ? next : current));
    };
    const teardown = () => {
      stopped = true;
      source?.close();
      clearInterval(pollTimer);
      clearTimeout(openTimer);
      clearTimeout(retryTimer);
    };

    const poll = async () => {
      if (stopped || inFlight) return;
      inFlight = true;
      try {
        const response = await fetch(url, { cache: "no-store", headers: { accept: "application/json" } });
        if (response.status === 401 || response.status === 404) {
          teardown();
          return setChannel("lost");
        }
        if (response.ok) {
          accept((await response.json()) as LeaseJson);
          if (!stopped && polling) setChannel("polling");
        }
      } catch {
        // Offline for a moment: say so; the next tick tries again.
        if (!stopped && polling) setChannel("offline");
      } finally {
        inFlight = false;
      }
    };
    const startPolling = () => {
      if (stopped || polling) return;
      polling = true;
      setChannel("polling");
      void poll();
      pollTimer = setInterval(() => void poll(), POLL_MS);
    };
    const stopPolling = () => {
      polling = false;
      clearInterval(pollTimer);
    };

    /** Gives up on this stream for now: poll meanwhile, and try a new one after the backoff. */
    const fallBack = () => {
      source?.close();
      source = null;
      clearTimeout(openTimer);
      startPolling();
      if (stopped || typeof EventSource === "undefined") return;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, SSE_RETRY_MAX_MS);
    };

    function connect() {
      if (stopped) return;
      let failures = 0;
      const stream = new EventSource(`${url}/events`);
      source = stream;
      openTimer = setTimeout(() => {
        if (source === stream && stream.readyState !== EventSource.OPEN) fallBack();
      }, SSE_OPEN_TIMEOUT_MS);
      stream.onopen = () => {
        if (source !== stream) return;
        failures = 0;
        retryDelay = SSE_RETRY_FIRST_MS;
        clearTimeout(openTimer);
        stopPolling();
        setChannel("live");
      };
      stream.addEventListener("lease", (event) => {
        try {
          accept(JSON.parse((event as MessageEvent<string>).data) as LeaseJson);
        } catch {
          // A malformed message is ignored; the next one replaces it.
        }
      });
      stream.onerror = () => {
        if (source !== stream) return;
        failures += 1;
        // CLOSED: the server refused (401, 404, 429 too many streams, 503); repeated errors:
        // it keeps dropping. A stream the server ended after a terminal state is not an error
        // to act on: that state is in the view, and this effect is being torn down.
        if (stream.readyState === EventSource.CLOSED || failures >= 3) fallBack();
      };
    }

    if (typeof EventSource === "undefined") startPolling();
    else connect();
    return teardown;
  }, [leaseId, setView, setChannel]);
}

/**
 * At the deadline (by the server's clock, as the countdown counts), asks the server where the
 * lease stands, then every second until it is no longer in flight past its deadline. Whatever
 * the transport does (a stream gone quiet behind a proxy, a poll just missed), the expiry
 * shows within about a second.
 */
export function useDeadlineCheck(view: LeaseJson | null, setView: (update: (current: LeaseJson | null) => LeaseJson | null) => void) {
  const leaseId = view?.lease_id ?? null;
  const untilDeadline = view ? Date.parse(view.deadline_at) - Date.parse(view.server_now) : 0;
  const reading = view ? `${view.lease_id}@${view.server_now}` : "";
  useEffect(() => {
    if (!leaseId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async () => {
      try {
        const response = await fetch(`/api/leases/${encodeURIComponent(leaseId)}`, {
          cache: "no-store",
          headers: { accept: "application/json" },
        });
        if (stopped || !response.ok) return;
        const next = (await response.json()) as LeaseJson;
        setView((current) => (newer(next, current) ? next : current));
      } catch {
        // The next check tries again.
      }
      if (!stopped) timer = setTimeout(check, DEADLINE_RECHECK_MS);
    };
    timer = setTimeout(check, Math.max(0, untilDeadline) + DEADLINE_CHECK_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // A new reading restarts the wait from its own server_now.
  }, [leaseId, untilDeadline, reading, setView]);
}

/**
 * Seconds left until the deadline, by the server's clock: the reading's deadline minus the
 * reading's `server_now`, less the time elapsed since the reading arrived (monotonic).
 * The first render uses the reading alone, so the server and the browser render the same.
 */
export function useServerCountdown(view: Pick<LeaseJson, "lease_id" | "deadline_at" | "server_now"> | null, running: boolean): number {
  const atReading = view ? (Date.parse(view.deadline_at) - Date.parse(view.server_now)) / 1000 : 0;
  const reading = view ? `${view.lease_id}@${view.server_now}` : "";
  const [tick, setTick] = useState({ reading, elapsed: 0 });
  useEffect(() => {
    if (!running) return;
    const start = performance.now();
    const timer = setInterval(() => setTick({ reading, elapsed: (performance.now() - start) / 1000 }), 250);
    return () => clearInterval(timer);
  }, [reading, running]);
  const elapsed = tick.reading === reading ? tick.elapsed : 0;
  return Math.ceil(atReading - elapsed);
}
