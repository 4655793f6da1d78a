"use client";
// A page or server action that failed (most often: the database is briefly unreachable;
// see docs/decisions/0009-database-faults.md) shows words and a way to try again, not a
// crash. The error itself is in the server log; its message is never shown here.
export default function PageError({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="card" role="alert">
      <h1>Something went wrong</h1>
      <p>We could not finish that just now, usually because the database was briefly out of reach. Try again in a few seconds.</p>
      <p>
        <button type="button" className="button" onClick={() => reset()}>
          Try again
        </button>
      </p>
    </div>
  );
}
