// R-DT-1..4 precondition (issue 21): before a run is given a Daytona sandbox, the environment's
// key is checked, so a missing or rejected key refuses the dispatch with a typed error naming the
// variable (provider_credentials_missing / provider_credentials_rejected) before any lease row or
// sandbox exists. The check is one cheap authenticated read: the first page (one item) of
// `Daytona.list` (GET /sandbox), filtered by a label no sandbox carries, so it lists nothing.
// A 401/403 is the rejected key (errors.ts); 429/5xx are retried by client.call like any read and
// then surface as provider_daytona_unavailable (the dispatch's ordinary provider failure).
import { parseDaytonaConfig } from "./config";
import { readApiKey } from "./credentials";
import type { DaytonaSandboxes } from "./sandboxes";

/** A label value no sandbox has: the read proves the key without listing anybody's sandboxes. */
const NO_MATCH = { "copyback.credential-check": "none" };

export async function checkCredentials(sandboxes: DaytonaSandboxes, rawConfig: unknown): Promise<void> {
  const config = parseDaytonaConfig(rawConfig);
  readApiKey(sandboxes.settings.variables, config.apiKeyEnv);
  const client = sandboxes.client({ apiUrl: config.apiUrl, apiKeyEnv: config.apiKeyEnv, target: config.target });
  await client.call("checking the API key", async (sdk) => {
    // The iterator fetches its first page on the first next(); one is enough.
    const iterator = sdk.list({ labels: NO_MATCH, limit: 1 });
    await iterator.next();
    await iterator.return?.();
  });
}
