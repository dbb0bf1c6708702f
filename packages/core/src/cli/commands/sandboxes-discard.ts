// `copyback sandboxes discard --lease ID --allocation ID [--acknowledge ACTION_ID]... --reason TEXT`:
// the explicit Discard of a retained sandbox through THE service behind the
// console's sandboxes.discard, discardRetainedSandbox; its admission (decideDiscard) is decided
// there. Like the recovery commands the CLI has no sign-in and records the system actor; the
// sandbox is destroyed through this instance's built-in providers (--home), by its pinned plugin.
import { z } from "zod";
import { resolveHostId } from "../../deployment/host-id";
import { notFound } from "../../errors";
import { createDefaultRegistry } from "../../providers/default-registry";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { discardRetainedSandbox } from "../../sandboxes/discard-sandbox";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

export interface DiscardOptions {
  lease: string;
  allocation: string;
  acknowledge: string[];
  reason: string;
}

const options = z.object({
  lease: z.uuid("--lease: a lease id (copyback sandboxes list)"),
  allocation: z.string().min(1, "--allocation: the allocation id shown by copyback sandboxes list"),
  acknowledge: z.array(z.uuid("--acknowledge: a recovery action id")),
  reason: z.string().trim().min(1, "--reason: say why the files are given up"),
});

export async function sandboxesDiscard(ctx: CommandContext, opts: DiscardOptions): Promise<CommandResult> {
  const parsed = options.safeParse(opts);
  if (!parsed.success) {
    throw new CliError(EXIT.usage, "invalid_request", `invalid discard, nothing destroyed: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  const input = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const lease = await prisma.environmentLease.findUnique({ where: { id: input.lease }, select: { companyId: true } });
    if (!lease) throw notFound(`The lease ${input.lease}`);
    // Issue 23: this instance root's host; another host's local sandbox is refused, nothing destroyed.
    const { hostId } = await resolveHostId({ instanceRoot: ctx.home, ...(ctx.env.hostId !== undefined ? { configured: ctx.env.hostId } : {}) });
    const result = await discardRetainedSandbox(
      { db: prisma, registry: createDefaultRegistry({ instanceRoot: ctx.home }), hostId },
      { companyId: lease.companyId, leaseId: input.lease, providerLeaseId: input.allocation, acknowledgedActionIds: input.acknowledge, reason: input.reason, actor: SYSTEM_ACTOR },
    );
    return {
      exitCode: EXIT.ok,
      json: { database: source, ...result },
      text: [
        `discarded: lease ${result.leaseId}, allocation ${result.providerLeaseId} destroyed through ${result.receipt.pluginId}; the destruction receipt (request ${result.receipt.requestId}) is recorded on the lease.`,
        result.actionIds.length > 0 ? `recorded as given up on: ${result.actionIds.join(", ")}` : "no open recovery action needed its files.",
      ],
    };
  });
}
