// The instance root the console keeps task attachments under (COPYBACK_HOME, the launcher sets
// it): the same store the worker and the reconstruction's hashes read (R-RC-3).
import { DomainError } from "@copyback/core/errors";
import { instanceRootForReports } from "~/env";

export function attachmentStoreRoot(): string {
  const root = instanceRootForReports();
  if (!root) throw new DomainError("unavailable", "instance_root_unknown", "COPYBACK_HOME is not set for the console, so task attachments cannot be stored or read here.");
  return root;
}
