// Said once at start: whether agents of this instance run isolated (bubblewrap), and when not,
// why. The same report goes to <COPYBACK_HOME>/isolation.json for the console; the
// worker renews it when it starts.
import {
  diagnoseBubblewrap,
  hostSearchPath,
  isolationReport,
  isolationWarning,
  writeIsolationReport,
} from "@copyback/core/providers";

export async function announceIsolation(instanceRoot: string, say: (message: string) => void): Promise<void> {
  const diagnosis = await diagnoseBubblewrap(hostSearchPath());
  const report = isolationReport(diagnosis, new Date());
  await writeIsolationReport(instanceRoot, report).catch((error: unknown) =>
    say(`could not record the host's isolation for the console: ${error instanceof Error ? error.message : String(error)}`),
  );
  say(isolationWarning(report) ?? `agents run isolated in bubblewrap sandboxes (${diagnosis.usable ? diagnosis.bwrap : "?"})`);
}
