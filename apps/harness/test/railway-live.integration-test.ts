// Opt-in, against Railway's real API (R-RW-2): with RAILWAY_API_TOKEN and RAILWAY_LIVE_DEPLOYMENT_ID
// set, the harness's read of that deployment returns the fields it decides on. It only reads.
// Without them it is skipped with its reason (Railway cannot be reached from the project's machines).
import { describe, expect, it } from "vitest";
import { readDeployment } from "../src/railway-client";

const token = process.env.RAILWAY_API_TOKEN;
const deploymentId = process.env.RAILWAY_LIVE_DEPLOYMENT_ID;
const SKIP_REASON = "RAILWAY_API_TOKEN and RAILWAY_LIVE_DEPLOYMENT_ID are not both set (opt-in live read of Railway's API)";

describe("Railway's real GraphQL API", () => {
  it("R-RW-2 reads a deployment's status, deploymentStopped, project, environment and service", async (ctx) => {
    if (!token || !deploymentId) {
      (ctx.task.meta as { skipReason?: string }).skipReason = SKIP_REASON;
      ctx.skip(SKIP_REASON);
      return;
    }
    const read = await readDeployment({ url: process.env.RAILWAY_API_URL ?? "https://backboard.railway.com/graphql/v2", token, timeoutMs: 15_000 }, deploymentId);
    expect(read).toMatchObject({
      kind: "found",
      deployment: { id: deploymentId, status: expect.any(String), deploymentStopped: expect.any(Boolean), projectId: expect.any(String), environmentId: expect.any(String), serviceId: expect.any(String) },
    });
  });
});
