import "server-only";
// Why agents of this instance run unisolated, as the worker last found it on its host
// (<COPYBACK_HOME>/isolation.json); shown beside "This environment is not isolated".
import { notIsolatedReason, readIsolationReport } from "@copyback/core/providers";
import { instanceRootForReports } from "~/env";

export async function hostIsolationReason(): Promise<string | null> {
  const home = instanceRootForReports();
  return home ? notIsolatedReason(await readIsolationReport(home)) : null;
}
