// The hostile-archive corpus (R-UA-2): each case is generated at test time and names the
// violation code validation must report. Every archive starts with harmless entries, so a
// validator that extracted "what it had seen so far" would leave visible traces.
import type { ArchiveLimits } from "../../src/copyback/archive/limits";
import {
  EOF,
  dir,
  file,
  gnuLong,
  gzip,
  gzipBomb,
  hardlink,
  header,
  pax,
  paxRecord,
  special,
  symlink,
  tar,
} from "./tar-builder";

export interface HostileCase {
  name: string;
  code: string;
  /** `outside` is an absolute directory next to the destination, for absolute-path attacks. */
  build(outside: string): Buffer;
  limits?: Partial<ArchiveLimits>;
}

const benign = () => [dir("ok/"), file("ok/readme.txt", "harmless\n")];
const withBenign = (...parts: Buffer[]) => tar(...benign(), ...parts);

export const HOSTILE_CASES: HostileCase[] = [
  // Path traversal and absolute paths
  {
    name: "parent traversal",
    code: "parent_traversal",
    build: () => withBenign(file("../evil.txt", "x")),
  },
  {
    name: "nested traversal",
    code: "parent_traversal",
    build: () => withBenign(file("ok/../../evil.txt", "x")),
  },
  {
    name: "deep traversal",
    code: "parent_traversal",
    build: () => withBenign(file("a/b/../../../../evil.txt", "x")),
  },
  { name: "bare '..' directory", code: "parent_traversal", build: () => withBenign(dir("../")) },
  {
    name: "absolute path",
    code: "absolute_path",
    build: (out) => withBenign(file(`${out}/evil.txt`, "x")),
  },
  {
    name: "absolute path in a pax header",
    code: "absolute_path",
    build: (out) =>
      withBenign(pax(paxRecord("path", `${out}/evil.txt`)), file("harmless.txt", "x")),
  },
  {
    name: "absolute path in a GNU long name",
    code: "absolute_path",
    build: (out) => withBenign(gnuLong("L", `${out}/${"n".repeat(120)}`), file("short", "x")),
  },
  {
    name: "traversal in a GNU long name",
    code: "parent_traversal",
    build: () =>
      withBenign(gnuLong("L", `${"../".repeat(3)}${"n".repeat(120)}`), file("short", "x")),
  },
  {
    name: "Windows drive path",
    code: "absolute_path",
    build: () => withBenign(file("C:/evil.txt", "x")),
  },
  {
    name: "backslash traversal",
    code: "invalid_path",
    build: () => withBenign(file("..\\..\\evil.txt", "x")),
  },
  {
    name: "text hidden after a NUL in the name",
    code: "malformed_archive",
    build: () => withBenign(file(Buffer.from("safe.txt\0\n/../../evil.txt"), "x")),
  },
  {
    name: "NUL inside a pax path",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("path", "safe\0/../../evil")), file("safe", "x")),
  },

  // Symlinks
  {
    name: "symlink then write through it",
    code: "through_symlink",
    build: () => withBenign(symlink("ok/link", "."), file("ok/link/evil.txt", "x")),
  },
  {
    name: "escaping symlink then write through it",
    code: "through_symlink",
    build: () => withBenign(symlink("up", "../.."), file("up/evil.txt", "x")),
  },
  {
    name: "later symlink replaces a directory already written into",
    code: "through_symlink",
    build: () => withBenign(file("d/inner.txt", "x"), symlink("d", "ok")),
  },
  {
    name: "absolute symlink",
    code: "absolute_symlink",
    build: (out) => withBenign(symlink("abs", `${out}`)),
  },
  {
    name: "escaping symlink",
    code: "symlink_escape",
    build: () => withBenign(symlink("ok/esc", "../../outside")),
  },
  {
    name: "symlink chain escaping (link to a link to the root)",
    code: "symlink_escape",
    build: () => withBenign(symlink("a/up", ".."), symlink("x", "a/up/..")),
  },
  {
    name: "symlink chain escaping through nested links",
    code: "symlink_escape",
    build: () => withBenign(symlink("p/q/r", "../.."), symlink("s", "p/q/r/../x")),
  },
  {
    name: "symlink chain escaping via a case-folded name",
    code: "symlink_escape",
    build: () => withBenign(symlink("d/esc", ".."), symlink("y", "D/ESC/..")),
  },
  {
    name: "symlink loop",
    code: "symlink_loop",
    build: () => withBenign(symlink("la", "lb"), symlink("lb", "la")),
  },
  {
    name: "absolute symlink in a GNU long link",
    code: "absolute_symlink",
    build: (out) =>
      withBenign(gnuLong("K", `${out}/${"t".repeat(120)}`), symlink("long", "placeholder")),
  },
  {
    name: "backslash in a symlink target",
    code: "invalid_path",
    build: () => withBenign(symlink("bs", "..\\..\\x")),
  },

  // Hard links, devices, FIFOs, unknown types
  {
    name: "hard link to an outside file",
    code: "hard_link",
    build: (out) => withBenign(hardlink("hl", `${out}/target`)),
  },
  {
    name: "hard link with traversal",
    code: "hard_link",
    build: () => withBenign(hardlink("hl", "../../etc/passwd")),
  },
  {
    name: "hard link inside the archive",
    code: "hard_link",
    build: () => withBenign(hardlink("hl", "ok/readme.txt")),
  },
  {
    name: "character device",
    code: "device",
    build: () => withBenign(special("null", "3", { devmajor: 1, devminor: 3 })),
  },
  {
    name: "block device",
    code: "device",
    build: () => withBenign(special("sda", "4", { devmajor: 8, devminor: 0 })),
  },
  { name: "FIFO", code: "fifo", build: () => withBenign(special("pipe", "6")) },
  {
    name: "unknown entry type",
    code: "unsupported_type",
    build: () => withBenign(special("weird", "Z")),
  },
  {
    name: "GNU sparse entry",
    code: "unsupported_type",
    build: () => withBenign(special("sparse", "S")),
  },
  {
    name: "GNU dump directory",
    code: "unsupported_type",
    build: () => withBenign(special("dump", "D")),
  },

  // Extended headers
  {
    name: "global pax header renaming entries",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("path", "../../evil"), "g"), file("x", "x")),
  },
  {
    name: "global pax header retargeting links",
    code: "suspicious_pax_header",
    build: (out) => withBenign(pax(paxRecord("linkpath", out), "g"), symlink("l", "ok")),
  },
  {
    name: "global pax header resizing entries",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("size", "0"), "g"), file("x", "payload")),
  },
  {
    name: "pax GNU sparse name",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("GNU.sparse.name", "../../evil")), file("x", "x")),
  },
  {
    name: "pax record with a lying length",
    code: "suspicious_pax_header",
    build: () => withBenign(pax("99 path=evil\n"), file("x", "x")),
  },
  {
    name: "pax record with a newline in the value",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("path", "safe\n../../evil")), file("x", "x")),
  },
  {
    name: "pax size that is not a decimal number",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("size", "0x10")), file("x", "x")),
  },
  {
    name: "pax path hiding an unsafe ustar name",
    code: "suspicious_pax_header",
    build: () => withBenign(pax(paxRecord("path", "safe.txt")), file("../../evil.txt", "x")),
  },
  {
    name: "GNU long name hiding text after its NUL",
    code: "suspicious_pax_header",
    build: () => withBenign(gnuLong("L", Buffer.from("safe\0../../evil")), file("short", "x")),
  },

  // Duplicates and collisions
  {
    name: "duplicate entry",
    code: "duplicate_entry",
    build: () => withBenign(file("ok/readme.txt", "replaced")),
  },
  {
    name: "duplicate after normalization",
    code: "duplicate_entry",
    build: () => withBenign(file("a//b.txt", "1"), file("./a/./b.txt", "2")),
  },
  {
    name: "Unicode normalization collision (NFC/NFD)",
    code: "normalization_collision",
    build: () => withBenign(file("caf\u00e9.txt", "nfc"), file("cafe\u0301.txt", "nfd")),
  },
  {
    name: "Unicode normalization collision in a directory name",
    code: "normalization_collision",
    build: () => withBenign(file("\u00c5/a", "nfc"), file("A\u030a/b", "nfd")),
  },
  {
    name: "case-fold collision",
    code: "case_collision",
    build: () => withBenign(file("README", "1"), file("readme", "2")),
  },
  {
    name: "file replacing a directory written into",
    code: "type_conflict",
    build: () => withBenign(file("t/inner.txt", "x"), file("t", "x")),
  },
  {
    name: "entry below a regular file",
    code: "type_conflict",
    build: () => withBenign(file("f", "x"), file("f/inner.txt", "x")),
  },
  {
    name: "archive root as a file",
    code: "type_conflict",
    build: () => withBenign(file(".", "x")),
  },

  // Limits
  {
    name: "deep nesting",
    code: "path_too_deep",
    build: () => withBenign(pax(paxRecord("path", `${"d/".repeat(65)}f`)), file("f", "x")),
  },
  {
    name: "component longer than 255 bytes",
    code: "path_too_long",
    build: () => withBenign(pax(paxRecord("path", "c".repeat(256))), file("f", "x")),
  },
  {
    name: "path longer than 4096 bytes",
    code: "path_too_long",
    build: () =>
      withBenign(pax(paxRecord("path", `${"p".repeat(200)}/`.repeat(21) + "f")), file("f", "x")),
  },
  {
    name: "oversized entry (6 GiB declared)",
    code: "entry_too_large",
    build: () => tar(...benign(), header({ name: "huge.bin", type: "0", size: 6 * 1024 ** 3 })),
  },
  {
    name: "too many entries",
    code: "too_many_entries",
    limits: { maxEntries: 10 },
    build: () => withBenign(...Array.from({ length: 10 }, (_, i) => file(`many/${i}`, "x"))),
  },
  {
    name: "files adding up beyond the total limit",
    code: "total_too_large",
    limits: { maxTotalBytes: 4096 },
    build: () => withBenign(file("big1", "x".repeat(3000)), file("big2", "x".repeat(3000))),
  },
  {
    name: "oversized extended header",
    code: "metadata_too_large",
    build: () =>
      withBenign(pax(paxRecord("comment", "c".repeat(1024 * 1024 + 10))), file("x", "x")),
  },
  { name: "decompression bomb", code: "compression_ratio", build: () => gzipBomb(256) },

  // Framing
  {
    name: "bad header checksum",
    code: "malformed_archive",
    build: () =>
      tar(
        ...benign(),
        Buffer.concat([header({ name: "x", type: "0", size: 0, badChecksum: true })]),
      ),
  },
  {
    name: "directory carrying data",
    code: "malformed_archive",
    build: () =>
      tar(...benign(), header({ name: "dd/", type: "5", size: 512 }), file("../evil.txt", "x")),
  },
  {
    name: "non-numeric size field",
    code: "malformed_archive",
    build: () =>
      tar(...benign(), header({ name: "x", type: "0", sizeField: Buffer.from("12x4\0") })),
  },
  {
    name: "entry after a single zero block",
    code: "malformed_archive",
    build: () => Buffer.concat([...benign(), Buffer.alloc(512), file("hidden.txt", "x"), EOF]),
  },
  {
    name: "archive without an end marker",
    code: "truncated_archive",
    build: () => Buffer.concat([...benign(), file("last.txt", "x")]),
  },
  {
    name: "archive cut inside a file body",
    code: "truncated_archive",
    build: () =>
      Buffer.concat([
        ...benign(),
        header({ name: "cut.bin", type: "0", size: 4096 }),
        Buffer.alloc(1000),
      ]),
  },
  {
    name: "truncated gzip stream",
    code: "truncated_archive",
    build: () => {
      const whole = gzip(tar(...benign(), file("f", "y".repeat(5000))));
      return whole.subarray(0, whole.length - 20);
    },
  },
  {
    name: "zstd-compressed input",
    code: "malformed_archive",
    build: () => Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(2048)]),
  },
  {
    name: "not a tar file",
    code: "malformed_archive",
    build: () => Buffer.from("#!/bin/sh\nrm -rf /\n".repeat(100)),
  },
  { name: "empty file", code: "truncated_archive", build: () => Buffer.alloc(0) },
];
