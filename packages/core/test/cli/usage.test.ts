// The CLI's surface: help with the exit-status table, usage errors (exit 2) in text and --json.
import { describe, expect, it } from "vitest";
import { describeFailure } from "../../src/cli/errors";
import { EXIT } from "../../src/cli/exit-codes";
import { parseJson, runCli } from "./helpers";

describe("copyback usage", () => {
  it("--help lists every command and prints the exit-status table (exit 0)", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    for (const word of ["locks", "archive", "merge", "manifest", "doctor", "--json", "--home"]) {
      expect(run.stdout).toContain(word);
    }
    expect(run.stdout).toMatch(
      /Exit status:\n\s+0\s+ok[\s\S]*\n\s+1\s+failed[\s\S]*\n\s+2\s+usage[\s\S]*\n\s+3\s+environment/,
    );
  });

  it("a subcommand's --help shows its options (exit 0)", async () => {
    const run = await runCli(["merge", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--baseline");
    expect(run.stdout).toContain("--no-retries");
  });

  it("no command, an unknown command, an unknown option or a missing required option: exit 2", async () => {
    for (const argv of [
      [],
      ["bogus"],
      ["doctor", "--frobnicate"],
      ["merge", "--archive", "x.tar"],
      ["archive", "check"],
    ]) {
      const run = await runCli(argv);
      expect(run.code, argv.join(" ")).toBe(EXIT.usage);
      expect(run.stderr.length, argv.join(" ")).toBeGreaterThan(0);
    }
  });

  it("a usage error with --json still yields exactly one JSON document on stdout", async () => {
    const run = await runCli(["--json", "merge", "--archive", "x.tar"]);
    expect(run.code).toBe(2);
    const doc = parseJson(run);
    expect(doc).toMatchObject({
      ok: false,
      command: "merge",
      exitCode: 2,
      error: { code: "usage" },
    });
    expect(String((doc.error as { message: string }).message)).toContain("--baseline");
  });

  it("--lock-timeout must be a whole number of milliseconds (exit 2)", async () => {
    const run = await runCli([
      "merge",
      "--baseline",
      "b",
      "--archive",
      "a",
      "--target",
      "t",
      "--lock-timeout",
      "soon",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("whole number of milliseconds");
  });

  it("a literal `--` forwarded by pnpm before the command is ignored", async () => {
    const run = await runCli(["--", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Exit status:");
  });
});

describe("exit-status policy", () => {
  it("maps the engine's stable codes to the table", () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    expect(describeFailure(coded("unsafe_archive")).exitCode).toBe(EXIT.failed);
    expect(describeFailure(coded("merge_conflict")).exitCode).toBe(EXIT.failed);
    expect(describeFailure(coded("copyback_write_failed")).exitCode).toBe(EXIT.failed);
    expect(describeFailure(coded("invalid_manifest")).exitCode).toBe(EXIT.usage);
    expect(describeFailure(coded("invalid_exclude")).exitCode).toBe(EXIT.usage);
    expect(describeFailure(coded("archive_unreadable")).exitCode).toBe(EXIT.usage);
    expect(describeFailure(coded("provider_delta_mismatch")).exitCode).toBe(EXIT.failed);
    expect(describeFailure(coded("directory_merge_lock_timeout")).exitCode).toBe(EXIT.environment);
    expect(describeFailure(coded("unsupported_lock_filesystem")).exitCode).toBe(EXIT.environment);
    expect(describeFailure(coded("lock_root_symlink")).exitCode).toBe(EXIT.environment);
    expect(describeFailure(coded("EACCES"))).toMatchObject({
      exitCode: EXIT.failed,
      expected: true,
    });
  });

  it("an unknown failure is exit 1 and flagged unexpected (it gets a stack trace)", () => {
    expect(describeFailure(new TypeError("boom"))).toMatchObject({
      exitCode: 1,
      code: "unexpected_error",
      expected: false,
    });
  });
});
