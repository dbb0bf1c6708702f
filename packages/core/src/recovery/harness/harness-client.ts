// The tenant's side of `POST /v1/tenant/workspace-worker-stop` (R-RW-2, R-RW-5): the fleet token
// authorizes the read; the harness URL, the token, this stack's id and the harness public keys are
// all the tenant holds (no Railway credential, R-RW-5). Any answer that is not the harness's own
// well-formed reply is `harness_unavailable`: the fence stays.
import { workerStopResponse, WORKER_STOP_PATH, type HarnessRefusalCode, type WorkerStopRequest } from "../../platforms/stop-request";
import type { HarnessKeySet } from "../../platforms/verify-stop-receipt";

export interface TenantHarnessConfig {
  /** The harness's base URL (https in production). */
  url: string;
  fleetToken: string;
  /** This stack's id, as the harness's HARNESS_STACKS names it. */
  stack: string;
  keys: HarnessKeySet;
  /** Per request; default 10 s. */
  timeoutMs?: number;
}

export type HarnessAnswer =
  | { kind: "receipt"; receipt: string }
  | { kind: "refused"; code: HarnessRefusalCode; message: string; status?: string }
  | { kind: "unavailable"; message: string };

const MAX_ANSWER_BYTES = 16 * 1024;

export async function askHarness(config: TenantHarnessConfig, request: WorkerStopRequest): Promise<HarnessAnswer> {
  const timeoutMs = config.timeoutMs ?? 10_000;
  let text: string;
  try {
    const response = await fetch(new URL(WORKER_STOP_PATH, config.url), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${config.fleetToken}` },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "error",
    });
    text = await response.text();
  } catch (error) {
    const name = (error as { name?: string }).name;
    return { kind: "unavailable", message: name === "TimeoutError" ? `The harness did not answer within ${timeoutMs} ms.` : `The harness could not be reached: ${(error as Error).message}` };
  }
  if (Buffer.byteLength(text) > MAX_ANSWER_BYTES) return { kind: "unavailable", message: "The harness's answer is too large." };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "unavailable", message: "The harness's answer is not JSON." };
  }
  const parsed = workerStopResponse.safeParse(json);
  if (!parsed.success) return { kind: "unavailable", message: "The harness's answer is not a stop answer." };
  const answer = parsed.data;
  return answer.outcome === "stopped"
    ? { kind: "receipt", receipt: answer.receipt }
    : { kind: "refused", code: answer.code, message: answer.message, ...(answer.status ? { status: answer.status } : {}) };
}
