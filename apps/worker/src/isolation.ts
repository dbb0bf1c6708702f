// At start the worker finds out whether its agents can be isolated on this host (bubblewrap) and
// records why not in <instance root>/isolation.json, where the console reads it for the
// environment and run pages. The provider itself still decides per sandbox.
import {
  diagnoseBubblewrap,
  hostSearchPath,
  isolationReport,
  isolationWarning,
  writeIsolationReport,
  type IsolationReport,
} from "@copyback/core/providers";

interface Log {
  warn(obj: object, msg: string): void;
}

/** Diagnoses and records; the caller logs the warning (after its "worker started" line). */
export async function reportHostIsolation(instanceRoot: string, log: Log): Promise<{ report: IsolationReport; warning: string | null }> {
  const diagnosis = await diagnoseBubblewrap(hostSearchPath());
  const report = isolationReport(diagnosis, new Date());
  try {
    await writeIsolationReport(instanceRoot, report);
  } catch (error) {
    log.warn({ err: error }, "could not record the host's isolation for the console");
  }
  return { report, warning: isolationWarning(report) };
}
