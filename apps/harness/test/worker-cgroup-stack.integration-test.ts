// Issue 22 part 5: the harness as a real process serving a worker-cgroup stack on this host. A real
// cgroup (v1 pids or v2, where this process may make one) stands for a worker's own group: a
// process in it, or in a group below it, keeps the fence (deployment_live, no receipt); once every
// process is gone the harness signs a receipt the tenant's verifier accepts. A group outside the
// stack's parent, of another boot or of another hierarchy is refused; one that does not exist proves nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importHarnessKeys, verifyStopReceipt, WORKER_STOP_PATH, type WorkerCgroupIdentity } from "@copyback/core/platforms";
import { workerCgroupPlace } from "@copyback/core/providers";
import { startHarness, type HarnessChild } from "@copyback/core/test-support/railway/harness-process";

const FLEET_TOKEN = "fleet-token-0123456789abcdef0123456789";
const KID = "harness-local-1";
const place = await workerCgroupPlace();
const bootId = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();

let harness: HarnessChild;
let publicJwk: Record<string, unknown>;
const made: string[] = [];
const sleepers: ChildProcess[] = [];

beforeAll(async () => {
  if (!place) return;
  const { privateKey, publicKey } = await generateKeyPair("Ed25519", { extractable: true });
  publicJwk = { ...(await exportJWK(publicKey)), kid: KID };
  harness = await startHarness({
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    // stack-misplaced: a mount point that is no cgroup (a configuration mistake).
    HARNESS_STACKS: JSON.stringify({ "stack-local": { kind: "worker_cgroup", ...place }, "stack-misplaced": { kind: "worker_cgroup", ...place, mountPoint: "/tmp" } }),
    HARNESS_SIGNING_KEY: JSON.stringify(await exportJWK(privateKey)),
    HARNESS_SIGNING_KID: KID,
  });
});

afterAll(async () => {
  for (const p of sleepers) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  await harness?.stop();
  for (const dir of made.reverse()) {
    for (let i = 0; i < 40 && (await rmdir(dir).then(() => false, () => true)); i += 1) await new Promise((r) => setTimeout(r, 25));
  }
});

/** A group as a worker makes it: `copyback-worker-<16 hex>` in the stack's parent. */
async function workerGroup(): Promise<{ identity: WorkerCgroupIdentity; dir: string }> {
  const name = `copyback-worker-${randomBytes(8).toString("hex")}`;
  const path = `${place!.parentPath.replace(/\/+$/, "")}/${name}`;
  const dir = join(place!.mountPoint, path);
  await mkdir(dir);
  made.push(dir);
  return { identity: { kind: "worker_cgroup", version: place!.version, path, bootId }, dir };
}

/** A leftover child: a sleep moved into the group (as a dead worker's tar would be). */
async function leftover(dir: string): Promise<ChildProcess> {
  const child = spawn("sleep", ["600"], { stdio: "ignore" });
  sleepers.push(child);
  await writeFile(join(dir, "cgroup.procs"), String(child.pid));
  return child;
}

async function ask(identity: WorkerCgroupIdentity, run = "run-1", stack = "stack-local") {
  const body = { stack, runId: run, ownerToken: "owner-token-local-0123456789", deployment: identity };
  const response = await fetch(`${harness.url}${WORKER_STOP_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${FLEET_TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const reason = "this machine lets no process make a cgroup (no writable v1 pids or delegated v2 group)";

describe.skipIf(!place)(`the harness's worker-cgroup stack on this host${place ? "" : ` (skipped: ${reason})`}`, () => {
  it("a process left in the worker's group, or in a group below it, keeps the fence; once all are gone the receipt is signed and verifies", async () => {
    const { identity, dir } = await workerGroup();
    const tar = await leftover(dir);
    expect(await ask(identity)).toMatchObject({ status: 409, body: { outcome: "refused", code: "deployment_live", status: "POPULATED" } });
    // An exec group below the worker's (cgroups.ts nests them there) counts too.
    const below = join(dir, `copyback-${randomBytes(8).toString("hex")}`);
    await mkdir(below);
    made.push(below);
    const agent = await leftover(below);
    tar.kill("SIGKILL");
    await once(tar, "exit");
    expect(await ask(identity)).toMatchObject({ status: 409, body: { code: "deployment_live" } });
    agent.kill("SIGKILL");
    await once(agent, "exit");
    const answer = await ask(identity);
    expect(answer).toMatchObject({ status: 200, body: { outcome: "stopped" } });
    const verdict = await verifyStopReceipt(answer.body.receipt, await importHarnessKeys({ keys: [publicJwk] }), {
      stack: "stack-local",
      runId: "run-1",
      ownerToken: "owner-token-local-0123456789",
      deployment: identity,
      now: new Date(),
    });
    expect(verdict).toMatchObject({ kind: "valid", kid: KID, claims: { deployment: identity } });
    // The receipt is for exactly that group: another one's verification fails.
    const other = { ...identity, path: identity.path.replace(/[0-9a-f]{16}$/, "0000000000000000") };
    expect(await verifyStopReceipt(answer.body.receipt, await importHarnessKeys({ keys: [publicJwk] }), { stack: "stack-local", runId: "run-1", ownerToken: "owner-token-local-0123456789", deployment: other, now: new Date() })).toMatchObject({ kind: "refused", code: "receipt_deployment" });
  });

  it("refuses a group outside the stack's parent, of another boot or another hierarchy version, and a group that does not exist", async () => {
    const { identity } = await workerGroup();
    expect(await ask({ ...identity, path: `/elsewhere/${identity.path.split("/").pop()}` })).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
    expect(await ask({ ...identity, bootId: "00000000-0000-0000-0000-000000000000" })).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
    expect(await ask({ ...identity, version: identity.version === 1 ? 2 : 1 })).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
    // Never made: its absence proves nothing about where the worker ran.
    const missing = { ...identity, path: identity.path.replace(/[0-9a-f]{16}$/, "ffffffffffffffff") };
    expect(await ask(missing)).toMatchObject({ status: 409, body: { code: "deployment_missing" } });
    // A stack configured with a mount point that is no cgroup never reads as empty.
    expect(await ask(identity, "run-1", "stack-misplaced")).toMatchObject({ status: 503, body: { code: "evidence_unavailable" } });
  });

  it("a Railway identity sent to the worker-cgroup stack is not its platform's", async () => {
    const railway = { kind: "railway", projectId: "p", environmentId: "e", serviceId: "s", deploymentId: "d" } as const;
    const response = await fetch(`${harness.url}${WORKER_STOP_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${FLEET_TOKEN}` },
      body: JSON.stringify({ stack: "stack-local", runId: "run-2", ownerToken: "owner-token-local-0123456789", deployment: railway }),
    });
    expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
  });
});
