// What the worker's kill-mid-copy tests share: a demo task whose agent writes enough random bytes
// for its export to be killed inside, a poll until a probe answers, and the sha256 of every file
// of a tree (the host's copy is compared with the sandbox's, byte for byte).
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { DEMO_COMPANY_ID, type PrismaClient } from "@copyback/db";

/**
 * A demo task assigned to an agent that writes `files` MiB of random bytes and submits its result
 * (in the demo Builder's environment unless `environmentId` names another).
 */
export async function bulkTask(prisma: PrismaClient, name: string, title: string, files: number, environmentId?: string) {
  const builder = await prisma.agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Builder" } });
  const bulk = await prisma.agent.create({
    data: {
      companyId: DEMO_COMPANY_ID,
      name,
      environmentId: environmentId ?? builder.environmentId,
      adapterConfig: { timeoutSeconds: 300 },
      command: [
        "/bin/sh",
        "-c",
        `mkdir -p bulk && i=0; while [ $i -lt ${files} ]; do head -c 1048576 /dev/urandom > bulk/f$i.bin; i=$((i+1)); done; printf '%s' '{"schema":"copyback.run-result.v1","outcome":"in_review","summary":"wrote the files"}' > "$COPYBACK_RESULT_FILE"`,
      ],
    },
  });
  const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title }, include: { executionWorkspace: true } });
  await prisma.issue.update({ where: { id: issue.id }, data: { assigneeAgentId: bulk.id } });
  return { issue, hostPath: issue.executionWorkspace?.hostPath ?? "" };
}

export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** sha256 of every regular file under root, by relative path. */
export async function hashes(root: string, rel = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, await hashes(root, child));
    else if (entry.isFile()) out[child] = createHash("sha256").update(await readFile(path.join(root, child))).digest("hex");
  }
  return out;
}
