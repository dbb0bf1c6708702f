export interface IdentitySummary {
  /** "Ada Lovelace" or "Local board". */
  label: string;
  /** An email or a short explanation, shown smaller. */
  detail?: string;
}

/** Who is signed in. Renders nothing until the identity is known (me.get, from the auth layer). */
export function Identity({ identity }: { identity: IdentitySummary | null }) {
  if (!identity) return null;
  return (
    <p className="text-right text-sm leading-tight" data-testid="identity">
      <span className="block font-medium text-slate-800">{identity.label}</span>
      {identity.detail ? <span className="block text-xs text-slate-500">{identity.detail}</span> : null}
    </p>
  );
}
