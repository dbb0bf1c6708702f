// The `recovery` commands: recovery actions (holds) in the instance database. Each command's
// module is loaded on use: the database client is not needed by the file-level commands.
import type { Command } from "commander";
import { RESOLVE_OUTCOMES } from "../../recovery/resolvable-holds";
import { collect, positiveInt, uuid, wholeNumber } from "../arguments";
import { DEFAULT_RESOLVE_OUTCOME, OUTCOMES_NEEDING_NOTE, resolveHelpText } from "../recovery/resolve-help";
import type { Runner } from "../runner";
import type { ResolveOptions } from "./recovery-resolve";

export function registerRecoveryCommands(program: Command, run: Runner): void {
  const recovery = program
    .command("recovery")
    .description("recovery actions (holds) in the instance database, for instance operators");
  recovery
    .command("list")
    .description("open recovery actions: company, task, run, cause, age and next action")
    .option("--company <id>", "only this company's", uuid)
    .option("--limit <n>", "at most this many, oldest first (default 200)", positiveInt)
    .action(
      run("recovery list", async (ctx, opts: { company?: string; limit?: number }) => {
        const { recoveryList, DEFAULT_LIST_LIMIT } = await import("./recovery-list");
        return recoveryList(ctx, {
          limit: opts.limit ?? DEFAULT_LIST_LIMIT,
          ...(opts.company === undefined ? {} : { companyId: opts.company }),
        });
      }),
    );
  recovery
    .command("show")
    .argument("<action-id>", "the recovery action", uuid)
    .description("one action: evidence, owner token, the run now, and the exact attestation calls")
    .action(
      run("recovery show", async (ctx, actionId: string) =>
        (await import("./recovery-show")).recoveryShow(ctx, actionId),
      ),
    );
  recovery
    .command("attest")
    .description(
      "attest that an unverified copyback owner's controller and its copyback subprocesses stopped (R-ATT-1); the reconciler then finishes the copyback. Recorded as the system actor",
    )
    .requiredOption("--action <id>", "the unverified-owner recovery action")
    .requiredOption("--run <id>", "its run")
    .requiredOption("--token <token>", "the owner token the action names (copyback recovery show)")
    .requiredOption(
      "--controller-and-copyback-stopped",
      "required: you verified on the deployment platform that they stopped",
    )
    .requiredOption("--evidence <text>", "what the platform shows (recorded on the action)")
    .action(
      run(
        "recovery attest",
        async (
          ctx,
          opts: {
            action: string;
            run: string;
            token: string;
            evidence: string;
            controllerAndCopybackStopped: boolean;
          },
        ) => (await import("./recovery-attest")).recoveryAttest(ctx, opts),
      ),
    );
  recovery
    .command("retry-export")
    .description(
      "request the export-only retry of a run whose export retries were exhausted (R-EX-2): the exact retained sandbox is resumed and verified, then the same run copies its saved result (no agent turn). Recorded as the system actor",
    )
    .requiredOption("--issue <id>", "the task", uuid)
    .requiredOption("--action <id>", "the export-retry recovery action")
    .requiredOption("--run <id>", "its run")
    .requiredOption("--note <text>", "what you repaired and how the sandbox's files were preserved (recorded on the action)")
    .action(
      run("recovery retry-export", async (ctx, opts: { issue: string; action: string; run: string; note: string }) =>
        (await import("./recovery-retry-export")).recoveryRetryExport(ctx, opts),
      ),
    );
  recovery
    .command("reconstruct")
    .description(
      "continue a task from saved sources after its sandbox's confirmed destruction (R-RC-2): the surviving attachments, a description of the missing work and the observed outcomes of external actions; a fresh run of the task's agent follows. Recorded as the system actor",
    )
    .requiredOption("--issue <id>", "the task", uuid)
    .requiredOption("--action <id>", "the export-failure recovery action whose sandbox was discarded")
    .requiredOption("--run <id>", "its run (the source)")
    .requiredOption("--lease <id>", "its destroyed lease")
    .requiredOption("--description <text>", "the missing work, for the fresh session")
    .requiredOption("--status-version <n>", "the task's status version you saw (copyback recovery show)", wholeNumber)
    .option("--attachment <id>", "a surviving attachment of the task (repeat for each)", collect, [])
    .option("--outcome <outcome=action>", "an external action and what you observed: performed=..., not_performed=... or unknown=... (repeat for each)", collect, [])
    .option("--request-id <id>", "idempotency key (default: a fresh one)")
    .action(
      run("recovery reconstruct", async (ctx, opts: { issue: string; action: string; run: string; lease: string; description: string; statusVersion: number; attachment: string[]; outcome: string[]; requestId?: string }) =>
        (await import("./recovery-reconstruct")).recoveryReconstruct(ctx, opts),
      ),
    );
  recovery
    .command("resolve")
    .description(
      "record a file hold's repair or a board disposition (R-RR-5, R-FO-5): one of the holds listed below, with the task's unchanged status, the source run and lease, and the evidence its outcome needs; changes nothing else. Recorded as the system actor",
    )
    .addHelpText("after", resolveHelpText())
    .requiredOption("--action <id>", "the recovery action")
    .option("--outcome <outcome>", `${RESOLVE_OUTCOMES.join(", ")} (default ${DEFAULT_RESOLVE_OUTCOME}; the evidence each needs is listed below)`)
    .requiredOption("--source-status <status>", "the task's current status, unchanged (copyback recovery show)")
    .requiredOption("--run <id>", "the source run the action records")
    .option("--lease <id>", "the retained lease the action records")
    .requiredOption("--run-status <status>", "the source run's status as you reconciled it")
    .option("--no-external-actions", "only for a cancelled native run whose history shows it performed none")
    .option("--stop-evidence <text>", "how you verified the exact allocation stopped")
    .option("--recovered-files <text>", "which files you recovered, and where")
    .option("--note <text>", `why (required for ${OUTCOMES_NEEDING_NOTE.join(" and ")})`)
    .action(
      run("recovery resolve", async (ctx, opts: ResolveOptions & { externalActions?: boolean }) => {
        // commander turns --no-external-actions into externalActions: false.
        const { externalActions, ...rest } = opts;
        return (await import("./recovery-resolve")).recoveryResolve(ctx, { ...rest, noExternalActions: externalActions === false });
      }),
    );
}
