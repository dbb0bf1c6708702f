// Issue 22 part 5: the worker-cgroup stack's pure decisions: where a worker's group must be (a
// direct child of the stack's parent, same hierarchy, this boot) and what a read of it means.
import { describe, expect, it } from "vitest";
import type { WorkerCgroupIdentity } from "@copyback/core/platforms";
import { decideCgroupPlace, decideCgroupStop } from "../src/worker-cgroup-check";

const BOOT = "0e5b2f4c-1a2b-4c3d-8e9f-0123456789ab";
const stack = { kind: "worker_cgroup" as const, version: 1 as const, mountPoint: "/sys/fs/cgroup/pids", parentPath: "/tenant" };
const identity: WorkerCgroupIdentity = { kind: "worker_cgroup", version: 1, path: "/tenant/copyback-worker-0123456789abcdef", bootId: BOOT };

describe("decideCgroupPlace", () => {
  it("accepts a direct child of the stack's parent on this boot", () => {
    expect(decideCgroupPlace(identity, stack, BOOT)).toBeNull();
    expect(decideCgroupPlace({ ...identity, path: "/copyback-worker-0123456789abcdef" }, { ...stack, parentPath: "/" }, BOOT)).toBeNull();
  });

  it("refuses a group elsewhere, nested deeper, of another hierarchy or another boot; an unreadable boot id is unavailable", () => {
    expect(decideCgroupPlace({ ...identity, path: "/other/copyback-worker-0123456789abcdef" }, stack, BOOT)).toMatchObject({ code: "deployment_not_owned" });
    expect(decideCgroupPlace({ ...identity, path: "/tenant/x/copyback-worker-0123456789abcdef" }, stack, BOOT)).toMatchObject({ code: "deployment_not_owned" });
    expect(decideCgroupPlace({ ...identity, version: 2 }, stack, BOOT)).toMatchObject({ code: "deployment_not_owned" });
    expect(decideCgroupPlace({ ...identity, bootId: "1e5b2f4c-1a2b-4c3d-8e9f-0123456789ab" }, stack, BOOT)).toMatchObject({ code: "deployment_not_owned" });
    expect(decideCgroupPlace(identity, stack, null)).toMatchObject({ code: "evidence_unavailable" });
  });
});

describe("decideCgroupStop", () => {
  it("signs only for an empty group; populated is live, missing proves nothing, unreadable is unavailable", () => {
    expect(decideCgroupStop({ kind: "empty" })).toEqual({ kind: "sign" });
    expect(decideCgroupStop({ kind: "populated", processes: 2 })).toMatchObject({ kind: "refuse", code: "deployment_live", status: "POPULATED" });
    expect(decideCgroupStop({ kind: "missing" })).toMatchObject({ kind: "refuse", code: "deployment_missing" });
    expect(decideCgroupStop({ kind: "unavailable", message: "x" })).toMatchObject({ kind: "refuse", code: "evidence_unavailable" });
  });
});
