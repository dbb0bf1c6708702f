// How an author or actor is shown to board users: a person's or agent's name, never an id.
import type { ActorType } from "@copyback/db/client";

export const LOCAL_BOARD_NAME = "Local board";
export const SYSTEM_NAME = "Copyback";

export function displayName(type: ActorType, named: { name: string } | null | undefined): string {
  switch (type) {
    case "local_board":
      return LOCAL_BOARD_NAME;
    case "system":
      return SYSTEM_NAME;
    case "user":
      return named?.name ?? "A former user";
    case "agent":
      return named?.name ?? "A removed agent";
  }
}
