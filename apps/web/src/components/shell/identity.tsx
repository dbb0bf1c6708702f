import type { RouterOutputs } from "~/components/trpc-types";

export interface IdentitySummary {
  /** "Ada Lovelace" or "Local board". */
  label: string;
  /** An email or a short explanation, shown smaller. */
  detail?: string;
}

/** The header's identity line from me.get; null (nothing shown) for anyone else. */
export function identityOf(me: RouterOutputs["me"]["get"]): IdentitySummary | null {
  switch (me.kind) {
    case "local_board":
      return { label: "Local board", detail: "Local mode" };
    case "board_user":
      if (!me.user) return null;
      return {
        label: me.user.name,
        detail: me.via === "board_api_key" ? `${me.user.email} · API key` : me.user.email,
      };
    default:
      return null;
  }
}

/** Who is signed in. Renders nothing when the identity is unknown. */
export function Identity({ identity }: { identity: IdentitySummary | null }) {
  if (!identity) return null;
  return (
    <p className="text-right text-sm leading-tight" data-testid="identity">
      <span className="block font-medium text-slate-800">{identity.label}</span>
      {identity.detail ? (
        <span className="block text-xs text-slate-500">{identity.detail}</span>
      ) : null}
    </p>
  );
}
