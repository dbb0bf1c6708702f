// GET /api/runs/:id/agent-output: the agent's whole kept output as a plain-text download (the run
// page shows only the latest lines). Lines come oldest first, read from the database a page at a
// time while the response streams, so a long output is never held whole.
//
// Query: `stream=stdout` or `stream=stderr` keeps one stream, as the agent wrote it; without it
// both are interleaved in the order they arrived, each stderr line marked `[stderr] `, and a last
// `[copyback] ...` line says so when the run's budget cut the output short.
//
// Answers:
//   200 text/plain; charset=utf-8, Content-Disposition: attachment; X-Copyback-Output-Truncated:
//       true when lines were dropped past the run's budget
//   404 not_found            no such run (or the caller may not know of it)
//   422 invalid_request      `stream` is neither stdout nor stderr
import { readAgentOutputTruncation, readAllAgentOutput } from "@copyback/core/records";
import { jsonError } from "../responses";
import { restRoute } from "../rest-route";
import { runFromPath } from "../resources";

const STREAMS = ["stdout", "stderr"] as const;
type StreamChoice = (typeof STREAMS)[number];

export const getAgentOutputRoute = restRoute({
  method: "GET",
  path: "/api/runs/:id/agent-output",
  permission: "runs:read",
  resource: runFromPath,
  handler: async ({ req, db, companyId, resource }) => {
    const requested = new URL(req.url).searchParams.get("stream");
    if (requested !== null && !(STREAMS as readonly string[]).includes(requested)) {
      return jsonError(422, { code: "invalid_request", message: "stream must be stdout or stderr.", issues: [{ path: ["stream"], message: "Expected stdout or stderr." }] });
    }
    const stream = (requested ?? undefined) as StreamChoice | undefined;
    const run = { companyId, runId: resource.id };
    const truncation = await readAgentOutputTruncation(db, run);
    const lines = readAllAgentOutput(db, run, stream ? { stream } : {});
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await lines.next();
        if (!next.done) {
          const line = next.value;
          controller.enqueue(encoder.encode(`${!stream && line.stream === "stderr" ? "[stderr] " : ""}${line.text}\n`));
          return;
        }
        if (!stream && truncation) {
          controller.enqueue(encoder.encode(`[copyback] The agent's output passed this run's budget (${truncation.maxEvents} lines or ${truncation.maxBytes} bytes); later lines were not kept.\n`));
        }
        controller.close();
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "content-disposition": `attachment; filename="run-${resource.id}-${stream ?? "output"}.txt"`,
        "x-copyback-output-truncated": truncation ? "true" : "false",
        "x-content-type-options": "nosniff",
        "cache-control": "private, no-store",
      },
    });
  },
});
