// Issue 22 part 4, `--attester harness`: the real stop harness (apps/harness) as the suite's
// attester. One harness process with a worker_cgroup stack on this host; the workers are started
// with COPYBACK_WORKER_CGROUP=on (each joins a cgroup of its own, its receipts name it) and the
// harness variables, so a replacement worker's reconciler asks the harness for a signed stop
// receipt and takes a dead owner's hold over itself (R-RW-3), with no operator attestation.
import { generateKeyPairSync } from "node:crypto";
import { rmdirSync } from "node:fs";
import { workerCgroupPlace } from "@copyback/core/providers";
import { startHarness, type HarnessChild } from "@copyback/core/test-support/railway/harness-process";

const FLEET_TOKEN = "torture-fleet-token-0123456789abcdef";
const KID = "torture-harness";
const STACK = "torture-local";

export interface StopHarness {
  /** The hierarchy and parent group the workers' groups are made in. */
  place: { version: 1 | 2; mountPoint: string; parentPath: string };
  /** What every worker is started with. */
  workerEnv: Record<string, string>;
  child: HarnessChild;
  /** The workers' groups the watch loop learnt: removed (once empty) when the harness stops. */
  groups: Set<string>;
  /** The leftover processes the watch loop placed in workers' groups: killed when the harness stops. */
  leftovers: Set<number>;
  stop(): Promise<number | null>;
}

/** Starts the harness process, or throws with the reason this machine cannot run the mode. */
export async function startStopHarness(): Promise<StopHarness> {
  const place = await workerCgroupPlace();
  if (!place) throw new Error("--attester harness needs a cgroup the workers can make (a writable v1 pids hierarchy or a delegated v2 group): none here");
  // node:crypto, not jose: the torture has no jose dependency, and a JWK is a JWK.
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const child = await startHarness({
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    HARNESS_STACKS: JSON.stringify({ [STACK]: { kind: "worker_cgroup", ...place } }),
    HARNESS_SIGNING_KEY: JSON.stringify(privateKey.export({ format: "jwk" })),
    HARNESS_SIGNING_KID: KID,
  });
  const groups = new Set<string>();
  const leftovers = new Set<number>();
  return {
    place,
    workerEnv: {
      COPYBACK_WORKER_CGROUP: "on",
      COPYBACK_HARNESS_URL: child.url,
      COPYBACK_HARNESS_FLEET_TOKEN: FLEET_TOKEN,
      COPYBACK_HARNESS_KEYS: JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: KID }] }),
      COPYBACK_STACK_ID: STACK,
    },
    child,
    groups,
    leftovers,
    stop: async () => {
      const code = await child.stop();
      for (const pid of leftovers) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* reaped already */
        }
      }
      await new Promise((r) => setTimeout(r, 200));
      // Nested groups first (the agents' exec groups inside a worker's); a populated one stays.
      for (const dir of [...groups].sort((a, b) => b.length - a.length)) {
        try {
          rmdirSync(dir);
        } catch {
          /* populated, or made below: left as it is */
        }
      }
      return code;
    },
  };
}
