// The process adapter's result file, published after the agent's turn like a finish call's result
// (runs/publish-result.ts; the finish API may have published one already).
import { codeOf, isDomainError, messageOf } from "../errors";
import { publishRunResult } from "../runs/publish-result";
import type { ReadyRunContext } from "./run-context";
import type { RunScope } from "./run-scope";

/** Publishes the result file; returns a note for the failure message when it was not accepted. */
export async function publishResultFile(run: RunScope, context: ReadyRunContext, text: string): Promise<string | null> {
  let document: unknown = text;
  try {
    document = JSON.parse(text);
  } catch {
    // Not JSON: published as is, so it is stored as a rejected result with its code.
  }
  try {
    const outcome = await publishRunResult(run.deps.db, {
      runId: context.runId,
      agentId: context.agentId,
      dedupeKey: "result-file",
      document,
      source: "result_file",
    });
    if (outcome.kind === "accepted") return null;
    return `Its result file was rejected (${outcome.code}: ${outcome.message}).`;
  } catch (error) {
    if (isDomainError(error) && error.code === "result_already_accepted") {
      await run.event("info", "result.file_ignored", "The result file was ignored: the run already has an accepted result (finish API).");
      return null;
    }
    await run.event("warn", "result.file_unpublished", `The result file could not be published: ${messageOf(error)}`, { code: codeOf(error, "result_publish_failed") });
    return `Its result file could not be published (${codeOf(error, "result_publish_failed")}).`;
  }
}
