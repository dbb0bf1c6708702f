"use client";

import { useState } from "react";

type State = { kind: "idle" } | { kind: "pending" } | { kind: "error"; message: string };

/** A sentence for each way sign-in can fail (never a server message we did not write). */
async function failureMessage(response: Response): Promise<string> {
  if (response.status === 401) return "That email and password do not match. Check both and try again.";
  if (response.status === 429) {
    const seconds = Number(response.headers.get("x-retry-after"));
    return Number.isFinite(seconds) && seconds > 0
      ? `Too many attempts. Wait ${seconds} seconds before trying again.`
      : "Too many attempts. Wait a minute before trying again.";
  }
  if (response.status === 403) return "This page was opened from another address than the console's. Open the console's own address and sign in there.";
  if (response.status === 404) return "Sign-in is not used on this server (local mode). Open the console directly.";
  return "Signing in did not work this time. Try again in a moment.";
}

/** Email and password sign-in against better-auth's endpoint; a full navigation afterwards picks up the session. */
export function SignInForm({ next }: { next: string }) {
  const [state, setState] = useState<State>({ kind: "idle" });
  const pending = state.kind === "pending";

  async function submit(form: HTMLFormElement) {
    const data = new FormData(form);
    setState({ kind: "pending" });
    try {
      const response = await fetch("/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: String(data.get("email") ?? "").trim(), password: String(data.get("password") ?? "") }),
        credentials: "same-origin",
      });
      if (response.ok) {
        window.location.assign(next);
        return;
      }
      setState({ kind: "error", message: await failureMessage(response) });
    } catch {
      setState({ kind: "error", message: "The console could not be reached. Check your connection and try again." });
    }
  }

  return (
    <form
      className="space-y-4"
      aria-describedby="sign-in-status"
      onSubmit={(event) => {
        event.preventDefault();
        void submit(event.currentTarget);
      }}
    >
      <div className="space-y-1.5">
        <label htmlFor="email" className="block text-sm font-medium text-slate-800">
          Email
        </label>
        <input id="email" name="email" type="email" autoComplete="username" required autoFocus className="field w-full" />
      </div>
      <div className="space-y-1.5">
        <label htmlFor="password" className="block text-sm font-medium text-slate-800">
          Password
        </label>
        <input id="password" name="password" type="password" autoComplete="current-password" required className="field w-full" />
      </div>
      <p id="sign-in-status" role="alert" aria-live="assertive" className="min-h-5 text-sm text-red-700" data-testid="sign-in-error">
        {state.kind === "error" ? state.message : null}
      </p>
      <button type="submit" className="btn btn-primary w-full" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
