/**
 * Whether the run's sandbox was isolated (DESIGN.md section 4: without bubblewrap the local
 * provider runs a plain process group, and the console says so plainly, with the reason the
 * worker found on its host when it is known). Nothing when unknown.
 */
export function IsolationNote({ isolated, reason }: { isolated: boolean | null; reason?: string | null }) {
  if (isolated === null) return null;
  return isolated ? (
    <p className="text-sm text-slate-600" data-testid="isolation-note">
      The agent ran in an isolated sandbox.
    </p>
  ) : (
    <div className="text-sm text-amber-800" data-testid="isolation-note">
      <p className="font-medium">This environment is not isolated</p>
      {reason ? (
        <p data-testid="isolation-reason">
          Why: {reason}
        </p>
      ) : null}
    </div>
  );
}
