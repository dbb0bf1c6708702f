// R-EX-8: the opt-in live test of the Daytona provider, against Daytona itself. Run by
// `pnpm test:live:daytona` (root package.json; vitest.live.config.ts), never by `npm test` (its
// tiers take *.test.ts and *.integration-test.ts only) nor by the browser E2E. It runs only when
// DAYTONA_API_KEY is set (DAYTONA_API_URL and DAYTONA_TARGET are optional); without it the test is
// reported as skipped with its reason, and a line says why it did not run.
//
// One disposable sandbox, labelled as this run's own fixture (copyback-live-fixture=<nonce>):
//   1. this process acquires it and seeds a known tree (nested folders, binary bytes, an empty and
//      an executable file, a link);
//   2. runtime A (a child process, its own provider instance) probes it with its first inspect
//      dropped, and asks for the stop, whose reply is lost; then A is gone;
//   3. runtime B (a fresh child process, a fresh provider) probes it (first call dropped again) and
//      stops it: a confirmed receipt, the sandbox read back stopped (or archived) with auto-delete
//      disabled (R-DT-1, R-DT-4);
//   4. runtime C (fresh again) resumes it and exports the workspace, which must equal the seeded
//      tree byte for byte;
//   5. finally, whatever happened: only sandboxes that carry this run's fixture label are deleted,
//      by id, and none is left with that label. COPYBACK_LIVE_FAIL_AFTER=seeded|stopped makes the
//      test fail on purpose there, to see that the cleanup runs after a failure too.
import { randomBytes, randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Daytona } from "@daytonaio/sdk";
import { describe, expect, it } from "vitest";
import { exportWorkspaceArchive } from "../../src/copyback/archive/export";
import { extractValidatedArchive } from "../../src/copyback/archive/extract";
import { validateArchive } from "../../src/copyback/archive/validate";
import { takeManifest } from "../../src/copyback/manifest/take-manifest";
import { createDaytonaProvider, type LeaseHandle } from "../../src/entries/providers";
import type { LiveStep, RuntimeInput } from "./daytona-live-runtime";

const KEY_VARIABLE = "DAYTONA_API_KEY";
const KEY = process.env[KEY_VARIABLE];
const API_URL = process.env.DAYTONA_API_URL;
const TARGET = process.env.DAYTONA_TARGET;
const FIXTURE_LABEL = "copyback-live-fixture";
const SKIP_REASON = `${KEY_VARIABLE} is not set`;
/** The cleanup's own check: set to a step name (seeded, stopped), the test fails right after it, and must still delete its fixture. */
const FAIL_AFTER = process.env.COPYBACK_LIVE_FAIL_AFTER;
const failAfter = (step: string) => {
  if (FAIL_AFTER === step) throw new Error(`COPYBACK_LIVE_FAIL_AFTER=${step}: failing on purpose to check the cleanup`);
};
const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
const runtimeScript = fileURLToPath(new URL("./daytona-live-runtime.ts", import.meta.url));

if (!KEY) {
  process.stdout.write(
    `\n[test:live:daytona] R-EX-8 did not run: ${SKIP_REASON}. It is opt-in: set ${KEY_VARIABLE} (and optionally DAYTONA_API_URL, DAYTONA_TARGET) to run it against Daytona; it is reported as skipped, not passed.\n\n`,
  );
}

/** One runtime: a child process with its own provider; its output drained, its JSON lines returned. */
async function runtime(input: RuntimeInput): Promise<Array<Record<string, unknown>>> {
  const child = spawn(tsx, [runtimeScript, JSON.stringify(input)], { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | string>((resolve) => {
    child.once("error", (error) => resolve(error.message));
    child.once("close", (status, signal) => resolve(status ?? signal ?? "?"));
  });
  if (code !== 0) throw new Error(`runtime ${input.steps.join(",")} exited ${code}: ${stderr.trim().slice(-2000)}`);
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The known tree: the same bytes on every run (a sha256 chain), so any change is a loss. */
async function knownTree(dir: string): Promise<void> {
  let block = createHash("sha256").update("copyback R-EX-8").digest();
  const chunks: Buffer[] = [];
  for (let i = 0; i < 4096; i++) {
    block = createHash("sha256").update(block).digest();
    chunks.push(block);
  }
  await mkdir(join(dir, "src", "deep", "deeper"), { recursive: true });
  await mkdir(join(dir, "empty-dir"));
  await writeFile(join(dir, "README.md"), "# live fixture\n");
  await writeFile(join(dir, "src", "deep", "deeper", "data.bin"), Buffer.concat(chunks));
  await writeFile(join(dir, "src", "empty.txt"), "");
  await writeFile(join(dir, "src", "run.sh"), "#!/bin/sh\necho ok\n");
  await chmod(join(dir, "src", "run.sh"), 0o755);
  await writeFile(join(dir, "src", "naïve name.txt"), "unicode\n");
  await symlink("deep/deeper/data.bin", join(dir, "src", "link-to-data"));
}

/** Deletes, by id, only the sandboxes that carry this run's fixture label; returns their ids. */
async function deleteOwnFixture(nonce: string, knownId: string | null): Promise<string[]> {
  const daytona = new Daytona({ apiKey: KEY!, ...(API_URL ? { apiUrl: API_URL } : {}), ...(TARGET ? { target: TARGET } : {}), useDeprecatedPolling: true, otelEnabled: false });
  const ids = new Set<string>();
  for await (const sandbox of daytona.list({ labels: { [FIXTURE_LABEL]: nonce } })) ids.add(sandbox.id);
  if (knownId && !ids.has(knownId)) {
    // Ours by id, but only deleted if it also carries our label (an id alone is never enough).
    const sandbox = await daytona.get(knownId).catch(() => null);
    if (sandbox?.labels?.[FIXTURE_LABEL] === nonce) ids.add(knownId);
  }
  for (const id of ids) {
    const sandbox = await daytona.get(id);
    if (sandbox.labels?.[FIXTURE_LABEL] !== nonce) continue;
    await daytona.delete(sandbox, 300);
  }
  return [...ids];
}

/** This run's fixture sandboxes not yet gone, once Daytona has had up to two minutes to finish deleting them. */
async function remainingFixture(nonce: string): Promise<string[]> {
  const daytona = new Daytona({ apiKey: KEY!, ...(API_URL ? { apiUrl: API_URL } : {}), ...(TARGET ? { target: TARGET } : {}), useDeprecatedPolling: true, otelEnabled: false });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const left: string[] = [];
    for await (const sandbox of daytona.list({ labels: { [FIXTURE_LABEL]: nonce } })) if (sandbox.state !== "destroyed") left.push(`${sandbox.id} (${sandbox.state})`);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

describe("R-EX-8 live Daytona provider test (opt-in)", () => {
  it.skipIf(!KEY)(
    KEY
      ? "R-EX-8 a disposable sandbox survives dropped probes and a lost stop reply: a fresh runtime stops it with its bytes, resumes and exports them byte for byte, and only this fixture is deleted"
      : `R-EX-8 live Daytona test (skipped: ${SKIP_REASON})`,
    async () => {
      const root = await mkdtemp(join(tmpdir(), "copyback-live-daytona-"));
      const nonce = `${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
      const pluginId = "builtin.daytona";
      let sandboxId: string | null = null;
      let failure: unknown = null;
      try {
        const provider = createDaytonaProvider({ instanceRoot: join(root, "creator") });
        const leaseId = `live-${randomUUID()}`;
        const config = {
          ...(API_URL ? { apiUrl: API_URL } : {}),
          ...(TARGET ? { target: TARGET } : {}),
          apiKeyEnv: KEY_VARIABLE,
          labels: { [FIXTURE_LABEL]: nonce },
          // A timer the stop must switch off and read back (R-DT-1).
          autoDeleteMinutes: 60,
        };
        const allocation = await provider.acquire!({ companyId: "live-test", environmentId: "live-test", leaseId, runId: `live-run-${nonce}`, config });
        const handle: LeaseHandle = { leaseId, pluginId, providerLeaseId: allocation.identity.providerLeaseId };
        sandboxId = /^daytona:([^?]+)/.exec(handle.providerLeaseId)?.[1] ?? null;
        expect(sandboxId).toBeTruthy();
        process.stdout.write(`[test:live:daytona] sandbox ${sandboxId}, fixture label ${FIXTURE_LABEL}=${nonce}\n`);

        const tree = join(root, "tree");
        await mkdir(tree);
        await knownTree(tree);
        const seeded = await takeManifest(tree);
        await provider.seedWorkspace!(handle, exportWorkspaceArchive(tree) as Readable);
        failAfter("seeded");

        const input = (steps: LiveStep[], extra: Partial<RuntimeInput> = {}): RuntimeInput => ({ handle, identity: allocation.identity, instanceRoot: join(root, `runtime-${randomUUID()}`), steps, ...extra });

        // Runtime A: a dropped probe, then a stop whose reply is lost; A exits.
        const a = await runtime(input(["probe", "stop-reply-lost"]));
        expect(a[0]).toMatchObject({ step: "probe", first: expect.stringContaining("injected transport fault"), state: "running" });
        expect(a[1]).toMatchObject({ step: "stop-reply-lost", seen: expect.stringContaining("reply was lost") });

        // Runtime B, fresh: its probe dropped too; then the stop, confirmed and read back.
        const b = await runtime(input(["probe", "stop", "inspect"]));
        expect(b[0]).toMatchObject({ step: "probe", first: expect.stringContaining("injected transport fault") });
        expect(b[1]).toMatchObject({ step: "stop", first: expect.stringContaining("injected transport fault"), receipt: { confirmed: true, providerLeaseId: handle.providerLeaseId } });
        expect(b[2]).toMatchObject({ step: "inspect", state: "stopped", identity: { fingerprint: allocation.identity.fingerprint }, remote: { autoDelete: "disabled" } });
        expect(["stopped", "archived"]).toContain((b[2]?.remote as { state?: string }).state);
        failAfter("stopped");

        // Runtime C, fresh: resume the same sandbox (same identity) and export it.
        const exportFile = join(root, "export.tar");
        const c = await runtime(input(["resume-export"], { exportFile }));
        expect(c[0]).toMatchObject({ step: "resume-export", identity: { fingerprint: allocation.identity.fingerprint } });
        const verdict = await validateArchive(exportFile);
        expect(verdict.kind).toBe("safe");
        const out = join(root, "exported");
        await mkdir(out);
        await extractValidatedArchive(exportFile, out);
        // Byte for byte: every entry, its type, size, sha256, mode and link target.
        expect(await takeManifest(out)).toEqual(seeded);
      } catch (error) {
        failure = error;
      } finally {
        // Also after a failure: only this run's fixture, by label and id.
        const deleted = await deleteOwnFixture(nonce, sandboxId).catch((error: unknown) => {
          process.stdout.write(`[test:live:daytona] cleanup failed: ${String(error)}; delete sandboxes labelled ${FIXTURE_LABEL}=${nonce} by hand\n`);
          throw error;
        });
        process.stdout.write(`[test:live:daytona] deleted ${deleted.length ? deleted.join(", ") : "nothing"} (label ${FIXTURE_LABEL}=${nonce})\n`);
        await rm(root, { recursive: true, force: true });
      }
      if (failure) throw failure;
      if (sandboxId) expect(await remainingFixture(nonce)).toEqual([]);
    },
    900_000,
  );
});
