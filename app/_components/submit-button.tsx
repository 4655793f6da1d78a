"use client";
import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";

/**
 * A submit button that is disabled while its form's action runs, so a double click sends
 * one request (the server still treats a second one as the same request).
 */
export function SubmitButton({
  children,
  pendingLabel,
  className = "button",
  disabled = false,
}: {
  children: ReactNode;
  pendingLabel?: string;
  className?: string;
  disabled?: boolean;
}) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" className={className} disabled={pending || disabled} aria-disabled={pending || disabled}>
      {pending && pendingLabel ? pendingLabel : children}
    </button>
  );
}
