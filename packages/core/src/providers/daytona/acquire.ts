// Acquisition of a Daytona sandbox for one lease. The sandbox is named after the lease, so the
// same lease acquiring again (a lost reply, a retried create) finds its own sandbox instead of
// making a second one; a sandbox of that name with another owner's labels is refused. The
// labels bind company, environment, run and lease, plus a random allocation nonce that goes into
// the fingerprint (identity.ts).
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { AcquireRequest, Allocation } from "../types";
import { encodeAddress } from "./address";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { parseDaytonaConfig, type DaytonaEnvironmentConfig } from "./config";
import { readApiKey } from "./credentials";
import { providerErrorOf, statusOf } from "./errors";
import { fingerprintOf, foreignSandbox, LABELS, ownedBy, sandboxNameOf, type Owner } from "./identity";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";

function createParams(config: DaytonaEnvironmentConfig, name: string, owner: Owner) {
  const labels = {
    ...config.labels,
    [LABELS.company]: owner.companyId,
    [LABELS.environment]: owner.environmentId,
    [LABELS.run]: owner.runId,
    [LABELS.lease]: owner.leaseId,
    [LABELS.allocation]: randomBytes(16).toString("hex"),
  };
  const base = {
    name,
    labels,
    ...(config.autoStopMinutes !== undefined ? { autoStopInterval: config.autoStopMinutes } : {}),
    ...(config.autoArchiveMinutes !== undefined ? { autoArchiveInterval: config.autoArchiveMinutes } : {}),
    // Never Daytona's `ephemeral` (deleted the moment it stops): a stopped sandbox may hold the
    // only copy of a run's files (R-DT-1). Absent: auto-delete disabled.
    autoDeleteInterval: config.autoDeleteMinutes ?? -1,
  };
  if (config.image !== undefined) return { ...base, image: config.image, ...(config.resources ? { resources: config.resources } : {}) };
  return { ...base, ...(config.snapshot !== undefined ? { snapshot: config.snapshot } : {}) };
}

async function findByName(client: DaytonaClient, name: string): Promise<Sandbox | null> {
  try {
    return await client.call(`looking up sandbox ${name}`, (sdk) => sdk.get(name));
  } catch (error) {
    if (error instanceof DomainError && statusOf((error as { cause?: unknown }).cause) === 404) return null;
    throw error;
  }
}

/** Daytona's states in which a lifecycle call is refused because a change is in progress. */
const MOVING = new Set(["creating", "starting", "stopping", "archiving", "restoring", "pending_build", "building_snapshot", "pulling_snapshot"]);
const SETTLE_POLL_MS = 100;

/** Fresh reads while the sandbox is moving, until it settles or the time is up; the last read. */
async function settledState(client: DaytonaClient, sandbox: Sandbox, timeoutSec: number): Promise<Sandbox> {
  const until = Date.now() + timeoutSec * 1000;
  let current = sandbox;
  while (MOVING.has(String(current.state)) && Date.now() < until) {
    await sleep(SETTLE_POLL_MS);
    current = await client.sandbox(current.id);
  }
  return current;
}

export async function acquireSandbox(sandboxes: DaytonaSandboxes, request: AcquireRequest): Promise<Allocation> {
  const config = parseDaytonaConfig(request.config);
  // A missing key is said before anything is asked of Daytona (the variable named, never its value).
  readApiKey(sandboxes.settings.variables, config.apiKeyEnv);
  const owner: Owner = { companyId: request.companyId, environmentId: request.environmentId, runId: request.runId, leaseId: request.leaseId };
  const name = sandboxNameOf(request.leaseId);
  const connection = { apiUrl: config.apiUrl, apiKeyEnv: config.apiKeyEnv, target: config.target };
  const client = sandboxes.client(connection);
  const timeout = sandboxes.settings.lifecycleTimeoutSec;

  let sandbox = await findByName(client, name);
  if (!sandbox) {
    try {
      // Not repeated on a 5xx: a create that took effect would be found by name on the next acquire.
      sandbox = await client.sdk().create(createParams(config, name, owner), { timeout });
    } catch (error) {
      // 409: the name exists (a create whose reply was lost, or a racing acquire): adopt it below.
      if (statusOf(error) !== 409) {
        throw providerErrorOf(error, { what: `creating sandbox ${name}`, variable: config.apiKeyEnv });
      }
      sandbox = await findByName(client, name);
      if (!sandbox) throw new DomainError("unavailable", "provider_daytona_unavailable", `Daytona said sandbox ${name} exists but did not return it.`);
    }
  }
  if (!ownedBy(sandbox, owner)) throw foreignSandbox(sandbox.id, request.leaseId);
  // An adopted sandbox (a create whose reply was lost, a racing acquire) may still be moving:
  // Daytona refuses a start mid-create with 409, so its move is waited for first.
  sandbox = await settledState(client, sandbox, timeout);
  if (sandbox.state !== "started") {
    const adopted = sandbox;
    await client.call(`starting sandbox ${sandbox.id}`, () => adopted.start(timeout), { sandboxId: sandbox.id });
  }
  // The directories copyback uses (idempotent: an adopted sandbox keeps what it has).
  const dirs = [LAYOUT.workspace, LAYOUT.agentDir, LAYOUT.transfers].map(shellQuote).join(" ");
  await runScript(client, sandbox, `mkdir -p ${dirs}`, { what: "preparing the sandbox", timeoutSec: 60 });
  return {
    identity: { providerLeaseId: encodeAddress({ sandboxId: sandbox.id, ...connection }), fingerprint: fingerprintOf(sandbox) },
    // A Daytona sandbox is its own machine: the agent cannot reach the controller's files.
    isolated: true,
  };
}
