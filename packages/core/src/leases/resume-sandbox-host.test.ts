// Issue 23 (host affinity): the verified resume never touches another host's local sandbox. The
// refusal comes before the plugin is looked up, so no provider call of any kind is made; on the
// lease's own host (or for a remote lease, host_id NULL) the resume goes on to the plugin.
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import type { LeaseProviderRegistry, LeaseRow } from "./lease-types";
import { resumeVerified } from "./resume-sandbox";

const lease = (hostId: string | null): LeaseRow =>
  ({
    id: "0badf00d-1234-4567-89ab-cdef01234567", companyId: "c", runId: "r", issueId: "i", environmentId: "e", executionWorkspaceId: null,
    provider: "local", pluginId: "builtin.local", providerLeaseId: "sbx-1", leasePolicy: "retain_on_failure", status: "pending_cleanup",
    metadata: {}, hostId,
  }) as unknown as LeaseRow;

function registry(): LeaseProviderRegistry & { asked: number } {
  const r = {
    asked: 0,
    forLease(): never {
      r.asked += 1;
      throw new DomainError("unavailable", "provider_plugin_unavailable", "no plugin in this test");
    },
  };
  return r as unknown as LeaseProviderRegistry & { asked: number };
}

describe("resumeVerified on many hosts (issue 23)", () => {
  it("host affinity: another host's local sandbox is refused sandbox_on_other_host before any plugin is asked", async () => {
    const r = registry();
    expect(await resumeVerified(r, lease("host-a"), { hostId: "host-b" })).toMatchObject({ kind: "failed", code: "sandbox_on_other_host", status: 409 });
    expect(r.asked).toBe(0);
  });

  it("host affinity: on its own host, and for a remote lease on any host, the resume goes on to the plugin", async () => {
    const own = registry();
    expect(await resumeVerified(own, lease("host-a"), { hostId: "host-a" })).toMatchObject({ kind: "failed", code: "provider_plugin_unavailable" });
    expect(own.asked).toBe(1);
    const remote = registry();
    expect(await resumeVerified(remote, lease(null), { hostId: "host-b" })).toMatchObject({ kind: "failed", code: "provider_plugin_unavailable" });
    expect(remote.asked).toBe(1);
  });
});
