import Link from "next/link";

// One answer for a foreign, missing or malformed id, so a guessed address never confirms
// that an invoice exists.
export default function NotFound() {
  return (
    <div className="card">
      <h1>Page not found</h1>
      <p>We could not find this page. It may not exist, or it may not be yours to see.</p>
      <p>
        <Link href="/invoices">Back to your invoices</Link>
      </p>
    </div>
  );
}
