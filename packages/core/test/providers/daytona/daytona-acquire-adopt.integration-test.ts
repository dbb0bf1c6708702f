// Acquisition adopting its own sandbox while Daytona is still making it: the torture suite's Daytona
// mode (seed 4) saw a create whose reply was lost followed by the SDK's second create (409: the
// name exists), the adoption by name finding the sandbox still `creating`, and a `start` that
// Daytona refused (409, a state change in progress): the run failed provider_daytona_refused
// although its sandbox came up a moment later. An adopted sandbox in a transitional state is
// waited for, not started.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDaytonaProvider } from "../../../src/providers/daytona/daytona-provider";
import type { EnvironmentProvider } from "../../../src/providers/types";
import { startDaytonaEmulator, type DaytonaEmulator } from "../../support/daytona/emulator";

const KEY = "DAYTONA_ADOPT_TEST_KEY";

describe("daytona acquisition adopting a sandbox that is still being created", { timeout: 60_000 }, () => {
  let root: string;
  let emulator: DaytonaEmulator;
  let provider: EnvironmentProvider;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "copyback-daytona-adopt-"));
    // Creating lasts 600 ms, as a real create takes a while: long enough for the adoption to meet it.
    emulator = await startDaytonaEmulator({ root: join(root, "emulator"), settleMs: 600 });
    provider = createDaytonaProvider({
      instanceRoot: join(root, "instance"),
      variables: (name) => (name === KEY ? emulator.apiKey : undefined),
      backoff: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 1_000 },
      lifecycleTimeoutSec: 5,
      transferTimeoutSec: 30,
    });
  });
  afterEach(async () => {
    await emulator.close();
    await rm(root, { recursive: true, force: true });
  });

  const acquire = (leaseId: string) => provider.acquire!({ companyId: "company-1", environmentId: "env-1", leaseId, runId: "run-1", config: { apiUrl: emulator.apiUrl, apiKeyEnv: KEY } });

  it("a create whose reply was lost is adopted once Daytona has started it, never refused for starting it mid-create", async () => {
    const leaseId = `lease-${randomUUID()}`;
    emulator.faults.once({ op: "create", kind: "lost_reply" });
    // The lease layer acquires again with the same lease id when the first answer was lost.
    let allocation = await acquire(leaseId).catch((error: unknown) => error);
    if (allocation instanceof Error) {
      expect(allocation).toMatchObject({ kind: "unavailable" });
      allocation = await acquire(leaseId);
    }
    expect(allocation).toMatchObject({ identity: { providerLeaseId: expect.stringMatching(/^daytona:/) } });
    const sandboxes = emulator.sandboxes.list();
    expect(sandboxes).toHaveLength(1);
    expect(sandboxes[0]?.state).toBe("started");
  });
});
