// The /api/events cells open the web process's one LISTEN connection (server/live/process-feed.ts);
// it must be closed before the harness drops the file's database.
import type { LiveFeed } from "~/server/live/live-feed";

export async function stopLiveFeed(): Promise<void> {
  const holder = globalThis as unknown as { copybackLiveFeed?: LiveFeed };
  const feed = holder.copybackLiveFeed;
  delete holder.copybackLiveFeed;
  await feed?.stop();
}
