// The host's isolation, as the worker found it at start (diagnoseBubblewrap), kept in
// `<instance root>/isolation.json` so that the launcher and the console can say *why* agents run
// unisolated ("This environment is not isolated: bubblewrap is not installed ..."), on the
// environment lease and on every run page. Only a report: the provider decides per sandbox.
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { BubblewrapDiagnosis } from "./bubblewrap";

export const ISOLATION_REPORT_FILE = "isolation.json";

const reportSchema = z.object({
  schema: z.literal("copyback.host-isolation.v1"),
  isolated: z.boolean(),
  reason: z.string().nullable(),
  host: z.string(),
  checkedAt: z.iso.datetime(),
});
export type IsolationReport = z.infer<typeof reportSchema>;

/** Pure: the report of one diagnosis. */
export function isolationReport(diagnosis: BubblewrapDiagnosis, now: Date, host = hostname()): IsolationReport {
  return {
    schema: "copyback.host-isolation.v1",
    isolated: diagnosis.usable,
    reason: diagnosis.usable ? null : diagnosis.reason,
    host,
    checkedAt: now.toISOString(),
  };
}

/** Pure: the line the launcher prints once at start, and the worker logs; null when agents are isolated. */
export function isolationWarning(report: Pick<IsolationReport, "isolated" | "reason">): string | null {
  if (report.isolated) return null;
  return `WARNING: agents are NOT isolated: ${report.reason ?? "bubblewrap does not work on this host"}. They can read and write everything this user can, the instance root and its database credentials included.`;
}

/** Pure: what the console says beside "This environment is not isolated"; null when there is nothing to add. */
export function notIsolatedReason(report: IsolationReport | null): string | null {
  if (!report || report.isolated || !report.reason) return null;
  return `${report.reason} (worker on ${report.host}, checked ${report.checkedAt})`;
}

/** Replaces the report in one rename: a reader sees the old or the new one, never half of one. */
export async function writeIsolationReport(instanceRoot: string, report: IsolationReport): Promise<void> {
  const file = join(instanceRoot, ISOLATION_REPORT_FILE);
  const staging = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await writeFile(staging, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await rename(staging, file);
  } finally {
    await rm(staging, { force: true });
  }
}

/** The last report, or null when there is none or it cannot be read as one. */
export async function readIsolationReport(instanceRoot: string): Promise<IsolationReport | null> {
  let text: string;
  try {
    text = await readFile(join(instanceRoot, ISOLATION_REPORT_FILE), "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = reportSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
