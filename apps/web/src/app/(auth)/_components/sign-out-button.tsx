"use client";

import { useState } from "react";

/**
 * Ends the console session (authenticated mode) and returns to the sign-in page. Render it only
 * for `me.get()` results with `kind: "board_user"` and `via: "session"`.
 */
export function SignOutButton({ className = "btn btn-secondary" }: { className?: string }) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className={className}
      disabled={pending}
      onClick={async () => {
        setPending(true);
        try {
          await fetch("/api/auth/sign-out", { method: "POST", headers: { "content-type": "application/json" }, body: "{}", credentials: "same-origin" });
        } finally {
          window.location.assign("/sign-in");
        }
      }}
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}
