// `copyback locks list`: every directory-merge lock of the instance root, held or free (a probe
// of the real SQLite lock, never the sidecar's word, R-LK-3), its owner sidecar as a claim, live
// waiters, and legacy `<hash>.lock/` directories, which block admission (R-LK-5).
import {
  LEGACY_UPGRADE_STEPS,
  listLocks,
  type LockListing,
  type LockListEntry,
} from "../../copyback/locks/index";
import type { OwnerRecord } from "../../copyback/locks/index";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import { table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export interface LockSummary {
  held: number;
  free: number;
  refused: number;
  missing: number;
  legacyDirectories: number;
  strayNames: number;
}

export function summarizeLocks(listing: LockListing): LockSummary {
  const count = (state: LockListEntry["state"]) =>
    listing.locks.filter((l) => l.state === state).length;
  return {
    held: count("held"),
    free: count("free"),
    refused: count("refused"),
    missing: count("missing"),
    legacyDirectories: listing.legacyDirectories.length,
    strayNames: listing.strayNames.length,
  };
}

export function describeOwner(owner: OwnerRecord): string {
  if (owner.status === "absent") return "-";
  if (owner.status !== "valid") return `(${owner.status} sidecar)`;
  return `pid ${owner.pid}${owner.hostname ? `@${owner.hostname}` : ""} since ${owner.createdAt}`;
}

export async function locksList(ctx: CommandContext): Promise<CommandResult> {
  const listing = await listLocks(ctx.home);
  const summary = summarizeLocks(listing);
  const json = { instanceRoot: ctx.home, ...listing, summary };
  if (listing.rootProblem) {
    throw new CliError(
      EXIT.environment,
      listing.rootProblem.code,
      listing.rootProblem.message,
      json,
    );
  }
  if (!listing.exists) {
    return {
      exitCode: EXIT.ok,
      json,
      text: [
        `no lock root at ${listing.lockRoot} (no merge has taken a lock in this instance root)`,
      ],
    };
  }
  const text = [
    `lock root ${listing.lockRoot}: ${summary.held} held, ${summary.free} free, ${summary.refused} refused, ${summary.legacyDirectories} legacy director${summary.legacyDirectories === 1 ? "y" : "ies"}`,
  ];
  if (listing.locks.length > 0) {
    text.push(
      ...table(
        [
          "lock",
          "state",
          "owner (sidecar, diagnostic only)",
          "waiters",
          "legacy",
          "target (sidecar)",
        ],
        listing.locks.map((l) => [
          l.hash.slice(0, 12),
          l.state === "refused" ? `refused: ${l.refusal?.code ?? "?"}` : l.state,
          describeOwner(l.owner),
          l.waiters === null ? "-" : String(l.waiters),
          l.legacyDirectory ? "BLOCKED" : "-",
          l.owner.target ?? "-",
        ]),
      ),
    );
  }
  if (listing.legacyDirectories.length > 0) {
    text.push("legacy lock directories (they block admission; never judged dead by PID or age):");
    for (const legacy of listing.legacyDirectories) {
      text.push(`  ${legacy.name}  old owner: ${describeOwner(legacy.owner)}`);
    }
    text.push(`  ${LEGACY_UPGRADE_STEPS}`);
  }
  if (listing.strayNames.length > 0) {
    text.push(`names that belong to no lock (left alone): ${listing.strayNames.join(", ")}`);
  }
  return { exitCode: EXIT.ok, json, text };
}
