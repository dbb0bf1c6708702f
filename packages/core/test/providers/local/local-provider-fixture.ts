// The local provider's tests run with real directories and real processes, once as a plain
// process group (isolation "none") and once as configured by default ("auto": bubblewrap where
// it works here, which the toolchain installs; a plain group otherwise, and the assertions follow
// `isolated`). This is their shared setup: a scratch instance root, a lease acquired in it, an
// exec with its output collected, and the process tree of an agent read from /proc.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { probeProcess, readProcessIdentity } from "../../../src/process/read-process-identity";
import type { ProcessIdentity } from "../../../src/process/process-identity";
import type { EnvironmentProvider, ExecRequest, LeaseHandle } from "../../../src/providers/types";
import { usableBubblewrap } from "../../../src/providers/local/bubblewrap";
import { hostSearchPath } from "../../../src/providers/local/env";
import { createLocalProvider, type LocalIsolation } from "../../../src/providers/local/local-provider";

export const ISOLATIONS: LocalIsolation[] = ["none", "auto"];

/** A scratch directory removed after the file's tests. */
export async function scratchDirectory(): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), "copyback-local-"));
  afterAll(async () => rm(scratch, { recursive: true, force: true }));
  return scratch;
}

const bubblewrapHere = (await usableBubblewrap(hostSearchPath())) !== null;

let counter = 0;
export const nextLeaseId = () => `${Date.now().toString(36)}-${++counter}`;

export async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Every descendant of a process, by walking /proc's parent PIDs. */
export async function descendants(pid: number): Promise<ProcessIdentity[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/stat`, "utf8").catch(() => null);
    if (text) parents.set(Number(name), Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const found: number[] = [];
  const visit = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent !== p) continue;
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return (await Promise.all(found.map((p) => readProcessIdentity(p)))).filter((x): x is ProcessIdentity => x !== null);
}

export const alive = async (identity: ProcessIdentity) => (await probeProcess(identity)).kind === "alive";

/** One isolation's instance root under `scratch`, and the helpers its tests share. */
export function localProviderSetup(scratch: string, isolation: LocalIsolation) {
  const instanceRoot = join(scratch, `instance-${isolation}`);
  const provider = () => createLocalProvider({ instanceRoot, isolation, killGraceMs: 500 });
  const expectIsolated = isolation === "auto" && bubblewrapHere;

  async function acquired(p: EnvironmentProvider = provider(), config: unknown = {}) {
    const leaseId = nextLeaseId();
    const allocation = await p.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: `run-${leaseId}`, config });
    const handle: LeaseHandle = { leaseId, pluginId: "builtin.local", providerLeaseId: allocation.identity.providerLeaseId };
    const root = join(instanceRoot, "sandboxes", handle.providerLeaseId);
    return { p, allocation, handle, root, workspace: join(root, "workspace") };
  }

  function run(p: EnvironmentProvider, handle: LeaseHandle, argv: string[], extra: Partial<ExecRequest> = {}) {
    const output = { stdout: "", stderr: "" };
    const result = p.exec!(handle, { argv, env: {}, timeoutMs: 60_000, onOutput: (s, c) => (output[s] += c), ...extra });
    return { result, output };
  }

  return { instanceRoot, provider, expectIsolated, acquired, run };
}
