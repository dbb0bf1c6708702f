// Acquisition of a local sandbox: a directory under the instance root made for one lease, with
// its identity record. The same lease acquiring again (a lost reply) gets its own sandbox back;
// anyone else is refused.
import { randomBytes } from "node:crypto";
import { lstat, mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../../errors";
import type { AcquireRequest, Allocation } from "../types";
import { parseLocalConfig } from "./config";
import type { ExportFaults } from "./export-faults";
import { chooseIsolation, type LocalIsolation } from "./isolation-choice";
import { fingerprintOf, foreign, type LocalSandboxes } from "./local-sandboxes";
import { checkLeaseId, providerLeaseIdOf, sandboxesDir, sandboxLayout } from "./sandbox-layout";
import { exists, readRecord, sandboxIdentityRecord, writeRecord, type SandboxIdentityRecord } from "./sandbox-records";

export interface AcquisitionOptions {
  isolation: LocalIsolation;
  searchPath: string;
  faults: ExportFaults;
}

export async function acquireSandbox(sandboxes: LocalSandboxes, options: AcquisitionOptions, request: AcquireRequest): Promise<Allocation> {
  const { pluginId } = sandboxes;
  checkLeaseId(request.leaseId);
  const config = parseLocalConfig(request.config);
  if (config.faults) options.faults.arm(request.leaseId, config.faults.failExports);
  const mode = await chooseIsolation(options.isolation, options.searchPath);
  const root = await sandboxes.instanceRoot();
  const providerLeaseId = providerLeaseIdOf(request.leaseId);
  const layout = sandboxLayout(root, providerLeaseId);

  const adopt = async (): Promise<Allocation> => {
    const stats = await lstat(layout.root);
    if (!stats.isDirectory()) throw foreign(layout.root);
    const record = await readRecord(layout.identityFile, sandboxIdentityRecord).catch(() => null);
    const ours =
      record?.leaseId === request.leaseId &&
      record.providerLeaseId === providerLeaseId &&
      record.pluginId === pluginId &&
      record.companyId === request.companyId &&
      record.environmentId === request.environmentId &&
      record.runId === request.runId;
    if (!record || !ours) throw foreign(layout.root);
    return { identity: await fingerprintOf(layout, record), isolated: record.isolation === "bubblewrap" };
  };
  if (await exists(layout.root)) return adopt();

  // Built aside and renamed into place: a crash never leaves a half-made sandbox under the lease's name.
  const staging = join(sandboxesDir(root), `.acquire-${providerLeaseId}-${randomBytes(6).toString("hex")}`);
  const staged = sandboxLayout(root, "");
  const inStaging = (path: string) => join(staging, path.slice(staged.root.length));
  const record: SandboxIdentityRecord = {
    schema: "copyback.local-sandbox.v1",
    leaseId: request.leaseId,
    providerLeaseId,
    pluginId,
    companyId: request.companyId,
    environmentId: request.environmentId,
    runId: request.runId,
    nonce: randomBytes(16).toString("hex"),
    isolation: mode,
    allowNetwork: config.allowNetwork,
    limits: config.limits,
    createdAt: new Date().toISOString(),
  };
  try {
    await mkdir(staging, { mode: 0o700 });
    for (const dir of [staged.workspace, staged.control, staged.agentDir]) await mkdir(inStaging(dir), { mode: 0o700 });
    await writeRecord(inStaging(staged.identityFile), record, { exclusive: true });
    if (await exists(layout.root)) throw Object.assign(new Error("raced"), { code: "EEXIST" });
    await rename(staging, layout.root);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (errnoOf(error) === "EEXIST" || errnoOf(error) === "ENOTEMPTY") return adopt();
    throw error;
  }
  return { identity: await fingerprintOf(layout, record), isolated: mode === "bubblewrap" };
}
