import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertLockableFilesystem, detectFilesystemType, findMountFor, parseMountInfo, untrustedLockingReason } from "../../src/copyback/locks";
import { unescapeMountField } from "../../src/copyback/locks/filesystem";
import { tempDir } from "./helpers";

const SAMPLE = [
  "22 27 0:21 / /proc rw,relatime - proc proc rw",
  "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
  "30 27 0:27 / /srv rw,relatime shared:5 - tmpfs tmpfs rw",
  "31 30 0:40 /exports/home /srv/home rw,relatime shared:7 master:1 - nfs4 fileserver:/exports/home rw,vers=4.2",
  "32 27 0:41 / /mnt/with\\040space rw - cifs //nas/share rw",
  "33 27 0:42 / /mnt/sshfs rw,nosuid - fuse.sshfs me@host:/data rw,user_id=0",
  "garbage line without fields",
  "34 27 0:43 / relative/mountpoint rw - ext4 /dev/x rw",
  "",
].join("\n");

describe("mountinfo parsing (pure)", () => {
  it("parses fields, optional fields and the separator; skips malformed lines", () => {
    const entries = parseMountInfo(SAMPLE);
    expect(entries.map((e) => e.mountPoint)).toEqual(["/proc", "/", "/srv", "/srv/home", "/mnt/with space", "/mnt/sshfs"]);
    expect(entries[3]).toEqual({ mountId: 31, parentId: 30, root: "/exports/home", mountPoint: "/srv/home", fsType: "nfs4", source: "fileserver:/exports/home" });
  });

  it("undoes the kernel's octal escapes", () => {
    expect(unescapeMountField("/a\\040b\\011c\\134d\\012e")).toBe("/a b\tc\\d\ne");
  });

  it("picks the longest mount-point prefix, never a mere string prefix", () => {
    const entries = parseMountInfo(SAMPLE);
    expect(findMountFor(entries, "/srv/home/alice/ws")?.fsType).toBe("nfs4");
    expect(findMountFor(entries, "/srv/home")?.fsType).toBe("nfs4");
    expect(findMountFor(entries, "/srv/homework")?.fsType).toBe("tmpfs");
    expect(findMountFor(entries, "/var/lib/copyback")?.fsType).toBe("ext4");
    expect(findMountFor(entries, "/mnt/with space/x")?.fsType).toBe("cifs");
    expect(findMountFor([], "/x")).toBeNull();
  });

  it("takes the upper of two mounts stacked on one mount point", () => {
    const stacked = parseMountInfo(["27 1 8:1 / / rw - ext4 /dev/sda rw", "40 27 0:50 / /data rw - nfs srv:/d rw", "41 40 0:51 / /data rw - xfs /dev/sdb rw"].join("\n"));
    expect(findMountFor(stacked, "/data/x")?.fsType).toBe("xfs");
    // listed the other way round, parentage still says which one is on top
    const reversed = parseMountInfo(["27 1 8:1 / / rw - ext4 /dev/sda rw", "41 40 0:51 / /data rw - xfs /dev/sdb rw", "40 27 0:50 / /data rw - nfs srv:/d rw"].join("\n"));
    expect(findMountFor(reversed, "/data/x")?.fsType).toBe("xfs");
  });

  it("refuses network and remote-FUSE types, accepts local ones", () => {
    for (const type of ["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "fuse.s3fs", "fuse.rclone", "ceph", "glusterfs", "lustre", "afs", "NFS4"]) {
      expect(untrustedLockingReason(type), type).not.toBeNull();
    }
    for (const type of ["ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "fuseblk", "fuse.fuse-overlayfs"]) {
      expect(untrustedLockingReason(type), type).toBeNull();
    }
  });
});

describe("assertLockableFilesystem", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir("fs")));
  afterAll(() => cleanup());

  it("detects the real filesystem of a temporary directory and accepts it", async () => {
    const info = await detectFilesystemType(dir);
    expect(info).not.toBeNull();
    expect(info?.lockable).toBe(true);
    expect(await assertLockableFilesystem(path.join(dir, "not", "created", "yet"))).toEqual(info);
  });

  it("refuses an instance root on NFS with code unsupported_lock_filesystem and no host path in the message", async () => {
    const fake = path.join(dir, "mountinfo");
    await writeFile(fake, `27 1 0:40 / / rw - nfs4 fileserver:/exports rw,vers=4.2\n`);
    const error = await assertLockableFilesystem(dir, fake).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unsupported_lock_filesystem", details: { fsType: "nfs4", mountPoint: "/" } });
    expect((error as Error).message).toContain("nfs4");
    expect((error as Error).message).not.toContain(dir);
  });

  it("treats a missing mountinfo as unknown, not as a refusal", async () => {
    expect(await detectFilesystemType(dir, path.join(dir, "no-such-mountinfo"))).toBeNull();
    expect(await assertLockableFilesystem(dir, path.join(dir, "no-such-mountinfo"))).toBeNull();
  });
});
