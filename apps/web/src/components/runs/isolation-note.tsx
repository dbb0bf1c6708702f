/**
 * Whether the run's sandbox was isolated (DESIGN.md section 4: without bubblewrap the local
 * provider runs a plain process group, and the console says so plainly). Nothing when unknown.
 */
export function IsolationNote({ isolated }: { isolated: boolean | null }) {
  if (isolated === null) return null;
  return isolated ? (
    <p className="text-sm text-slate-600" data-testid="isolation-note">
      The agent ran in an isolated sandbox.
    </p>
  ) : (
    <p className="text-sm font-medium text-amber-800" data-testid="isolation-note">
      This environment is not isolated
    </p>
  );
}
