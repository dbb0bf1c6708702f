import type { RouterOutputs } from "~/components/trpc-types";

type Recovery = RouterOutputs["issues"]["list"]["items"][number]["recovery"];

const TONE: Record<NonNullable<Recovery>["kind"], string> = {
  attention: "bg-amber-50 text-amber-800 ring-amber-600/20",
  restoring: "bg-indigo-50 text-indigo-700 ring-indigo-600/20",
};

/**
 * The issues board's recovery chip: "Needs attention" while a recovery waits for an operator,
 * "Restoring saved work…" once it is queued (the task's notice, derived by core's
 * deriveTaskNotice on the server); nothing otherwise.
 */
export function RecoveryChip({ recovery }: { recovery: Recovery }) {
  if (recovery === null) return null;
  return (
    <span
      data-testid="recovery-chip"
      data-kind={recovery.kind}
      className={`inline-flex items-center whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${TONE[recovery.kind]}`}
    >
      {recovery.label}
    </span>
  );
}
