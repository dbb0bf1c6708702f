// The fake's measureSandbox: the in-memory workspace's file bytes and entries, and the whole
// sandbox's with its placed inputs.
import { ancestorsOf } from "../../copyback/manifest/paths";
import type { MeasureRequest, SandboxMeasurement } from "../types";
import type { FakeSandbox } from "./sandbox";

/** What the sandbox holds, within the entry budget (the fake has no clock to run out of). */
export function measureFakeSandbox(sandbox: FakeSandbox, request: MeasureRequest): SandboxMeasurement {
  // Parent directories are implied in the fake's workspace: each counts as an entry, as on disk.
  const entries = new Map<string, number>();
  for (const [path, entry] of sandbox.workspace) {
    entries.set(path, entry.kind === "file" ? entry.content.length : 0);
    for (const parent of ancestorsOf(path)) if (!entries.has(parent)) entries.set(parent, 0);
  }
  const workspace = { bytes: 0, entries: 0 };
  let cut = false;
  for (const bytes of [...entries.values()]) {
    if (workspace.entries >= request.budget.entries) {
      cut = true;
      break;
    }
    workspace.entries += 1;
    workspace.bytes += bytes;
  }
  const inputs = [...(sandbox.inputs?.values() ?? [])];
  const sandboxSize = cut
    ? null
    : { bytes: workspace.bytes + inputs.reduce((n, bytes) => n + bytes.length, 0), entries: workspace.entries + inputs.length };
  return { workspace, sandbox: sandboxSize, lowerBound: cut ? "entry_budget" : null };
}
