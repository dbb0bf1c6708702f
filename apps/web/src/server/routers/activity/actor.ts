// Who did it, as the activity log and the conversation record it. The trusted local board has no
// user row (actor id null); agents are recorded by their agent id.
import type { Principal } from "@copyback/core/auth";
import type { Actor } from "@copyback/core/records";

export type { Actor };

export function actorOf(principal: Principal): Actor {
  switch (principal.kind) {
    case "board_user":
      return { type: "user", id: principal.userId };
    case "local_board":
      return { type: "local_board", id: null };
    case "agent":
      return { type: "agent", id: principal.agentId };
    case "anonymous":
      // Unreachable behind companyProcedure: anonymous principals are refused before any write.
      throw new Error("An anonymous principal cannot act.");
  }
}
