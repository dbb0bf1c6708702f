import { describe, expect, it } from "vitest";
import { remoteSandboxId, remoteStorageNote } from "./remote-storage";

describe("remoteStorageNote", () => {
  it("R-DT-3 a retained Daytona sandbox says its storage costs continue while repair waits, with its size where the provider told", () => {
    expect(remoteStorageNote("daytona", { bytes: 4_200_000 }, "4.2 MB")).toBe(
      "Kept in Daytona with its files (4.2 MB): storage costs continue while repair waits. No sweep deletes it by age (R-DT-3); discard it once the files are no longer needed.",
    );
    expect(remoteStorageNote("daytona", null, "size unknown")).toContain("(its disk): storage costs continue while repair waits");
  });

  it("R-DT-3 local and fake sandboxes get no remote-storage note", () => {
    expect(remoteStorageNote("local", { bytes: 1 }, "1 B")).toBeNull();
    expect(remoteStorageNote("fake", null, "size unknown")).toBeNull();
  });

  it("reads the Daytona sandbox id out of a provider lease id, and nothing out of another", () => {
    expect(remoteSandboxId("daytona:sbx-9?api=https%3A%2F%2Fapp.daytona.io%2Fapi&keyEnv=DAYTONA_API_KEY")).toBe("sbx-9");
    expect(remoteSandboxId("local:/x")).toBeNull();
    expect(remoteSandboxId(null)).toBeNull();
  });
});
