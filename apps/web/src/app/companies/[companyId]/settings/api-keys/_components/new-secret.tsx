"use client";

import { useState } from "react";

/** The one time a key's secret is visible: copy it now, it cannot be shown again. */
export function NewSecret({ name, secret, onDismiss }: { name: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="status" className="rounded-lg border border-emerald-200 bg-emerald-50 px-4 py-4" data-testid="new-key-secret">
      <p className="text-sm font-medium text-emerald-900">Key “{name}” created. Copy it now: it will not be shown again.</p>
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <label htmlFor="new-secret" className="sr-only">
          The new key
        </label>
        <input
          id="new-secret"
          readOnly
          value={secret}
          onFocus={(event) => event.currentTarget.select()}
          className="field min-w-0 flex-1 font-mono text-xs"
          data-testid="new-key-secret-value"
        />
        <button
          type="button"
          className="btn btn-secondary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
              setCopied(true);
            } catch {
              setCopied(false);
            }
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="btn btn-secondary" onClick={onDismiss}>
          Done
        </button>
      </div>
    </div>
  );
}
