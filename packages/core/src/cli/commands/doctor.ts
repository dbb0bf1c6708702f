// `copyback doctor`: is this instance root fit for directory-merge locks? Checks that the root
// exists and is private, that its filesystem's locking can be trusted (network filesystems are
// refused), and the lock root's health. Exit 0 when nothing fails (warnings allowed), else 3.
import { HOST_ID_FILE, readHostId } from "../../deployment/host-id";
import { isDomainError } from "../../errors";
import { LEGACY_UPGRADE_STEPS, detectFilesystemType, listLocks } from "../../copyback/locks/index";
import { EXIT } from "../exit-codes";
import { inspectInstanceRoot, listStaging, octal } from "../instance-root";
import type { CommandContext, CommandResult } from "../io";
import { summarizeLocks } from "./locks-list";

export type CheckStatus = "ok" | "warn" | "fail";

export interface DoctorCheck {
  id: "instance_root" | "host_id" | "filesystem" | "lock_root" | "staging";
  status: CheckStatus;
  summary: string;
  details: Record<string, unknown>;
}

export async function doctor(ctx: CommandContext): Promise<CommandResult> {
  const checks: DoctorCheck[] = [];

  const root = await inspectInstanceRoot(ctx.home);
  if (root.kind === "missing") {
    checks.push({
      id: "instance_root",
      status: "fail",
      summary: `${ctx.home} does not exist (the first merge or \`npm start\` creates it, private)`,
      details: { ...root },
    });
  } else if (root.kind === "not_directory") {
    checks.push({
      id: "instance_root",
      status: "fail",
      summary: `${ctx.home} is not a directory`,
      details: { ...root },
    });
  } else if (root.serverTraverseOnly) {
    checks.push({
      id: "instance_root",
      status: "ok",
      summary: `${ctx.home} is private but for the traverse bit (mode ${octal(root.mode)}): the embedded PostgreSQL runs as its own account, which must pass through to its data directory postgres/data; others can enter by name only, never list or write (do not chmod 700: the server would lose its data directory)`,
      details: { ...root },
    });
  } else if (!root.private) {
    checks.push({
      id: "instance_root",
      status: "fail",
      summary: `${ctx.home} is not private (mode ${octal(root.mode)}): run chmod 700 ${ctx.home}`,
      details: { ...root },
    });
  } else {
    const notes = [
      root.kind === "symlink_to_directory" ? `a symlink to ${root.realPath}` : null,
      root.ownedByCurrentUser === false ? "owned by another user" : null,
    ].filter((n): n is string => n !== null);
    checks.push({
      id: "instance_root",
      status: root.ownedByCurrentUser === false ? "warn" : "ok",
      summary: `${ctx.home} is a private directory (mode ${octal(root.mode)})${notes.length ? `, ${notes.join(", ")}` : ""}`,
      details: { ...root },
    });
  }

  const fs = await detectFilesystemType(ctx.home);
  if (fs === null) {
    checks.push({
      id: "filesystem",
      status: "warn",
      summary: "filesystem type unknown (no /proc/self/mountinfo): locking cannot be vouched for",
      details: {},
    });
  } else if (!fs.lockable) {
    checks.push({
      id: "filesystem",
      status: "fail",
      summary: `refused: ${fs.fsType} at ${fs.mountPoint}: ${fs.reason}; its file locking cannot be trusted, move the instance root to a local disk`,
      details: { ...fs },
    });
  } else {
    checks.push({
      id: "filesystem",
      status: "ok",
      summary: `${fs.fsType} (mounted at ${fs.mountPoint}): file locking can be trusted`,
      details: { ...fs },
    });
  }

  if (root.kind === "directory" || root.kind === "symlink_to_directory") {
    const listing = await listLocks(ctx.home);
    const summary = summarizeLocks(listing);
    const details = {
      lockRoot: listing.lockRoot,
      exists: listing.exists,
      rootProblem: listing.rootProblem,
      ...summary,
    };
    if (listing.rootProblem) {
      checks.push({
        id: "lock_root",
        status: "fail",
        summary: `refused: ${listing.rootProblem.message}`,
        details,
      });
    } else if (!listing.exists) {
      checks.push({
        id: "lock_root",
        status: "ok",
        summary: "not created yet (the first merge creates it, 0700)",
        details,
      });
    } else {
      const counts = `${summary.held} held, ${summary.free} free, ${summary.refused} refused, ${summary.legacyDirectories} legacy director${summary.legacyDirectories === 1 ? "y" : "ies"}`;
      const problems: string[] = [];
      if (summary.refused > 0)
        problems.push(`${summary.refused} lock file(s) refused (see \`copyback locks list\`)`);
      if (summary.legacyDirectories > 0)
        problems.push(`legacy lock directories block admission. ${LEGACY_UPGRADE_STEPS}`);
      const status: CheckStatus =
        problems.length > 0 ? "fail" : summary.strayNames > 0 ? "warn" : "ok";
      const extra = summary.strayNames > 0 ? `; ${summary.strayNames} stray name(s)` : "";
      checks.push({
        id: "lock_root",
        status,
        summary: `${counts}${extra}${problems.length ? `: ${problems.join("; ")}` : ""}`,
        details,
      });
    }
    const leftovers = await listStaging(root.realPath ?? ctx.home);
    checks.push({
      id: "staging",
      status: leftovers.length > 0 ? "warn" : "ok",
      summary:
        leftovers.length > 0
          ? `${leftovers.length} leftover staging director${leftovers.length === 1 ? "y" : "ies"} from interrupted merges (safe to delete when no merge runs)`
          : "no leftover staging directories",
      details: { leftovers },
    });
  }

  checks.push(await hostIdCheck(ctx));
  const failed = checks.some((c) => c.status === "fail");
  return {
    exitCode: failed ? EXIT.environment : EXIT.ok,
    json: { instanceRoot: ctx.home, healthy: !failed, checks },
    text: [
      ...checks.map((c) => `${c.status.padEnd(4)}  ${c.id.padEnd(13)}  ${c.summary}`),
      failed
        ? "doctor: problems found (exit 3)"
        : "doctor: this instance root is fit for directory-merge locks",
    ],
  };
}

/** Issue 23: the host id that binds this instance's host-local work; doctor reads, never creates it. */
async function hostIdCheck(ctx: CommandContext): Promise<DoctorCheck> {
  const configured = ctx.env.hostId;
  try {
    const found = await readHostId({ instanceRoot: ctx.home, ...(configured !== undefined ? { configured } : {}) });
    if (!found) {
      return { id: "host_id", status: "ok", summary: `no host id yet: the first worker start generates one into ${ctx.home}/${HOST_ID_FILE}`, details: { hostId: null } };
    }
    const from = found.source === "env" ? "COPYBACK_HOST_ID" : `${ctx.home}/${HOST_ID_FILE}`;
    return { id: "host_id", status: "ok", summary: `host id ${found.hostId} (from ${from})`, details: { hostId: found.hostId, source: found.source } };
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return { id: "host_id", status: "fail", summary: error.message, details: { code: error.code } };
  }
}
