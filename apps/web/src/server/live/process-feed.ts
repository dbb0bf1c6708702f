import "server-only";
import { env } from "~/env";
import { createLiveFeed, type LiveFeed } from "./live-feed";

// ONE LISTEN connection per web process, whatever the number of open pages. Kept on globalThis
// so that dev-mode module reloads reuse it instead of opening another connection each time.
const holder = globalThis as unknown as { copybackLiveFeed?: LiveFeed };

export function liveFeed(): LiveFeed {
  holder.copybackLiveFeed ??= createLiveFeed({ databaseUrl: env().DATABASE_URL });
  return holder.copybackLiveFeed;
}
