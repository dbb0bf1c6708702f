// R-DT-2: the acquisition-time sentinel of a Daytona sandbox, written once at LAYOUT.sentinel:
// beside the workspace, never inside it, so it is neither exported nor seeded over (a workspace
// copied in from elsewhere cannot bring one). Read back with the same schema as the local
// provider's; a malformed one is refused, never taken for a legacy allocation's absence.
import { Buffer } from "node:buffer";
import { DomainError } from "../../errors";
import { sandboxSentinelRecord } from "../local/sandbox-records";
import type { LeaseHandle, SandboxSentinel } from "../types";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import { digestScript, downloadChecked, parseDigest } from "./transfer";

const MAX_SENTINEL_BYTES = 64 * 1024;
/** readWorkspaceSentinel's refusal for a sandbox that is not started (the caller may resume it first). */
export const SANDBOX_NOT_RUNNING = "provider_sandbox_not_running";

export function daytonaSentinel(sandboxes: DaytonaSandboxes) {
  async function writeWorkspaceSentinel(lease: LeaseHandle, sentinel: SandboxSentinel): Promise<void> {
    const parsed = sandboxSentinelRecord.safeParse(sentinel);
    if (!parsed.success || sentinel.leaseId !== lease.leaseId || sentinel.providerLeaseId !== lease.providerLeaseId) {
      throw new DomainError("invalid", "provider_sentinel_invalid", `The sentinel does not belong to lease ${lease.leaseId}.`);
    }
    const { client, sandbox } = await sandboxes.open(lease);
    const body = Buffer.from(`${JSON.stringify(parsed.data)}\n`);
    const file = shellQuote(LAYOUT.sentinel);
    const temp = shellQuote(`${LAYOUT.sentinel}.new`);
    // Written aside, then linked into place: `ln` refuses an existing name, so a sentinel is never
    // overwritten (provider_sentinel_exists), and a crash leaves none or the whole one.
    await client.call("uploading the sentinel", () => sandbox.fs.uploadFile(body, `${LAYOUT.sentinel}.new`), { sandboxId: sandbox.id });
    const placed = await runScript(client, sandbox, `ln ${temp} ${file} 2>/dev/null; s=$?; rm -f ${temp}; [ $s -eq 0 ] || exit 20`, {
      what: "placing the sentinel",
      timeoutSec: 60,
      allow: [20],
    });
    if (placed.exitCode === 20) throw new DomainError("conflict", "provider_sentinel_exists", `The sandbox of lease ${lease.leaseId} already has a sentinel.`);
  }

  async function readWorkspaceSentinel(lease: LeaseHandle): Promise<SandboxSentinel | null> {
    const { client, sandbox } = await sandboxes.open(lease);
    // Daytona runs no command in a sandbox that is not started: say so by code, so the export-only
    // retry reads it after its verified resume instead (leases/resume-sandbox.ts, R-DT-2).
    if (sandbox.state !== "started") {
      throw new DomainError("conflict", SANDBOX_NOT_RUNNING, `The sentinel of lease ${lease.leaseId} cannot be read while its Daytona sandbox is ${String(sandbox.state)}.`);
    }
    const file = shellQuote(LAYOUT.sentinel);
    const probe = await runScript(client, sandbox, `if [ ! -e ${file} ] && [ ! -L ${file} ]; then exit 10; fi\n[ -f ${file} ] && [ ! -L ${file} ] || exit 11\n${digestScript(LAYOUT.sentinel)}`, {
      what: "looking for the sentinel",
      timeoutSec: 60,
      allow: [10, 11],
    });
    const corrupt = (why: string) => new DomainError("conflict", "provider_sandbox_record_invalid", `The sentinel of lease ${lease.leaseId} is unusable (${why}).`);
    if (probe.exitCode === 10) return null;
    if (probe.exitCode === 11) throw corrupt("not a regular file");
    const digest = parseDigest(probe.output);
    if (!digest) throw corrupt("unreadable");
    if (digest.size > MAX_SENTINEL_BYTES) throw corrupt("too large");
    const chunks: Buffer[] = [];
    for await (const chunk of await downloadChecked(client, sandbox, LAYOUT.sentinel, digest, { what: "sentinel", timeoutSec: 60 })) chunks.push(chunk as Buffer);
    let value: unknown;
    try {
      value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      throw corrupt("not JSON");
    }
    const parsed = sandboxSentinelRecord.safeParse(value);
    if (!parsed.success) throw corrupt("not a sentinel");
    return parsed.data;
  }

  return { writeWorkspaceSentinel, readWorkspaceSentinel };
}
