// Who may read the console's /api/metrics. The metrics are instance-wide
// (every company's runs and recovery actions, counted), so a company role is not enough: the
// trusted local board, an instance administrator (signed in: board API keys never carry instance-wide authority), or a scraper that
// presents COPYBACK_METRICS_TOKEN. Never public: in authenticated mode because the issue's
// operators expect it, in local mode because the console trusts only the person at it.
import type { Principal } from "../auth/principal";

export type MetricsAccess = { kind: "allow" } | { kind: "deny"; status: 401 | 403; code: "unauthenticated" | "forbidden"; message: string };

export function decideMetricsAccess(input: { tokenMatched: boolean; principal: Principal }): MetricsAccess {
  if (input.tokenMatched) return { kind: "allow" };
  const { principal } = input;
  switch (principal.kind) {
    case "local_board":
      return { kind: "allow" };
    case "board_user":
      if (principal.isInstanceAdmin) return { kind: "allow" };
      return { kind: "deny", status: 403, code: "forbidden", message: "Metrics are instance-wide: an instance administrator or the metrics token (COPYBACK_METRICS_TOKEN) may read them." };
    case "agent":
      return { kind: "deny", status: 403, code: "forbidden", message: "Agents may not read metrics." };
    case "anonymous":
      return { kind: "deny", status: 401, code: "unauthenticated", message: "Send Authorization: Bearer <COPYBACK_METRICS_TOKEN>, or sign in as an instance administrator." };
  }
}
