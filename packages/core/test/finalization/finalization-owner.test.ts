import { mkdtemp, readdir, rm, symlink, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { createStagingDir, removeStagingDir } from "../../src/finalization/staging";

const receipt = { token: "x".repeat(32), host: "h", pid: 12, processStart: "99", bootId: "b" };

describe("finalization owner receipt", () => {
  it("R-OWN-1 the lock key is the spec's, scoped to company and run", () => {
    expect(finalizationLockKey("c1", "r1")).toBe("native-workspace-finalization:c1:r1");
  });

  it("R-OWN-7 reads an exact receipt; a malformed one still counts as present and grants nothing", () => {
    expect(readFinalizationOwner({})).toEqual({ kind: "none" });
    expect(readFinalizationOwner(null)).toEqual({ kind: "none" });
    expect(readFinalizationOwner({ [FINALIZATION_OWNER_KEY]: receipt, other: 1 })).toEqual({ kind: "receipt", receipt });
    expect(readFinalizationOwner({ [FINALIZATION_OWNER_KEY]: { ...receipt, pid: "12" } })).toEqual({ kind: "malformed" });
    expect(readFinalizationOwner({ [FINALIZATION_OWNER_KEY]: { token: "short" } })).toEqual({ kind: "malformed" });
  });
});

describe("staging directories", () => {
  it("are private, replace a leftover of a crashed attempt and are removed with read-only contents", async () => {
    const root = await mkdtemp(join(tmpdir(), "copyback-staging-"));
    try {
      const first = await createStagingDir(root, "run-1");
      await mkdir(join(first, "leftover"));
      const again = await createStagingDir(root, "run-1");
      expect(again).toBe(first);
      expect(await readdir(again)).toEqual([]);
      await mkdir(join(again, "ro"), { mode: 0o500 });
      await removeStagingDir(again);
      expect(await readdir(join(root, "staging"))).toEqual([]);
      await removeStagingDir(again); // absent is fine
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("refuse a name that is not a plain name and a staging root that is a symlink, creating nothing", async () => {
    const root = await mkdtemp(join(tmpdir(), "copyback-staging-"));
    try {
      await expect(createStagingDir(root, "../escape")).rejects.toMatchObject({ code: "staging_name_invalid" });
      expect(await readdir(root)).toEqual([]);
      const elsewhere = await mkdtemp(join(tmpdir(), "copyback-elsewhere-"));
      await symlink(elsewhere, join(root, "staging"));
      await expect(createStagingDir(root, "run-1")).rejects.toMatchObject({ code: "staging_root_invalid" });
      expect(await readdir(elsewhere)).toEqual([]);
      await rm(elsewhere, { recursive: true, force: true });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
