// Where the local project's signed-in browser state lives (playwright.config.ts, local-sign-in.setup.ts).
import path from "node:path";

/** The local board's browser state (its console cookie) under the local launcher's COPYBACK_HOME. */
export function localStorageStatePath(home: string): string {
  return path.join(home, "e2e-local-board.json");
}
