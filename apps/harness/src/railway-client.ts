// Reads one deployment from Railway's public GraphQL API (backboard.railway.com/graphql/v2) with
// the harness's own token. Plain fetch: one fixed query needs no GraphQL client. Every way the read
// can fail is a kind of its own, so the harness says why it did not sign (R-RW-2): no answer in
// time or an error is "unavailable"; an answer cut short or without the fields is "truncated".
import { z } from "zod";

export const DEPLOYMENT_QUERY = `query copybackWorkerStop($id: String!) {
  deployment(id: $id) { id status deploymentStopped projectId environmentId serviceId }
}`;

/** Far above the answer to the query above (~300 bytes). */
const MAX_RESPONSE_BYTES = 64 * 1024;

const deploymentFields = z.object({
  id: z.string(),
  // Railway's DeploymentStatus (BUILDING, CRASHED, DEPLOYING, FAILED, INITIALIZING, NEEDS_APPROVAL,
  // QUEUED, REMOVED, REMOVING, SKIPPED, SLEEPING, SUCCESS, WAITING); a value added later is kept
  // as it is and, not being REMOVED, is never signed.
  status: z.string().min(1),
  deploymentStopped: z.boolean(),
  projectId: z.string(),
  environmentId: z.string(),
  serviceId: z.string(),
});
export type RailwayDeployment = z.infer<typeof deploymentFields>;

const answer = z.object({
  data: z.object({ deployment: deploymentFields.nullable() }).nullable().optional(),
  errors: z.array(z.object({ message: z.string() }).loose()).optional(),
});

export type DeploymentRead =
  | { kind: "found"; deployment: RailwayDeployment }
  | { kind: "missing"; message: string }
  | { kind: "unavailable"; message: string }
  | { kind: "truncated"; message: string };

export interface RailwayClientOptions {
  url: string;
  token: string;
  timeoutMs: number;
}

export async function readDeployment(opts: RailwayClientOptions, deploymentId: string): Promise<DeploymentRead> {
  let response: Response;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    response = await fetch(opts.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${opts.token}` },
      body: JSON.stringify({ query: DEPLOYMENT_QUERY, variables: { id: deploymentId } }),
      signal,
    });
  } catch (error) {
    if (isTimeout(error)) return { kind: "unavailable", message: `Railway did not answer within ${opts.timeoutMs} ms` };
    return { kind: "unavailable", message: `Railway could not be reached: ${(error as Error).message}` };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: "unavailable", message: `Railway answered HTTP ${response.status}` };
  }
  let text: string;
  try {
    text = await readCapped(response);
  } catch (error) {
    if (isTimeout(error)) return { kind: "unavailable", message: `Railway's answer did not finish within ${opts.timeoutMs} ms` };
    // The headers came, the body did not: an answer cut short.
    return { kind: "truncated", message: error instanceof ResponseTooLarge ? error.message : "Railway's answer was cut short" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "truncated", message: "Railway's answer is not complete JSON" };
  }
  const parsed = answer.safeParse(json);
  if (!parsed.success) return { kind: "truncated", message: "Railway's answer lacks the deployment's fields" };
  const { data, errors } = parsed.data;
  if (errors && errors.length > 0) {
    const message = errors.map((e) => e.message).join("; ");
    // Railway answers an unknown (or deleted and purged) id with an error, not a null.
    return /not found/i.test(message) ? { kind: "missing", message } : { kind: "unavailable", message: `Railway answered with errors: ${message}` };
  }
  if (!data) return { kind: "truncated", message: "Railway's answer has no data" };
  if (data.deployment === null) return { kind: "missing", message: "Railway knows no such deployment" };
  return { kind: "found", deployment: data.deployment };
}

class ResponseTooLarge extends Error {}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

async function readCapped(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLarge(`Railway's answer is over ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
