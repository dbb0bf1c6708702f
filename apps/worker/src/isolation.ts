// At start the worker finds out whether its agents can be isolated on this host (bubblewrap) and
// records why not in <instance root>/isolation.json, where the console reads it for the
// environment and run pages (issue 13 §1). The provider itself still decides per sandbox.
import {
  diagnoseBubblewrap,
  hostSearchPath,
  isolationReport,
  isolationWarning,
  writeIsolationReport,
  type IsolationReport,
} from "@copyback/core/providers/local/index";

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export async function reportHostIsolation(instanceRoot: string, log: Log): Promise<IsolationReport> {
  const diagnosis = await diagnoseBubblewrap(hostSearchPath());
  const report = isolationReport(diagnosis, new Date());
  try {
    await writeIsolationReport(instanceRoot, report);
  } catch (error) {
    log.warn({ err: error }, "could not record the host's isolation for the console");
  }
  const warning = isolationWarning(report);
  if (warning) log.warn({ reason: report.reason }, warning);
  else log.info({ bwrap: diagnosis.usable ? diagnosis.bwrap : null }, "agents run isolated with bubblewrap");
  return report;
}
