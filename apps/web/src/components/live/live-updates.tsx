"use client";

// <LiveUpdates companyId>: keeps the pages under it current. Each change pushed by the server
// (a run finishing, a message, a recovery notice, a status move by the worker) invalidates the
// TanStack queries that show it and refreshes the server-rendered parts with router.refresh().
// The data itself is re-read through the normal authorized procedures: events carry ids only.
import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { liveEventsUrl } from "~/server/live/wire";
import { connectLiveEvents, type LiveConnectionStatus } from "./live-connection";
import { routerQueryKey, routersToRefresh } from "./live-invalidation";
import { createRefreshBatcher } from "./refresh-batcher";
import { usePageVisible } from "./use-page-visible";

/** How long a background tab keeps its stream before closing it. */
const HIDDEN_GRACE_MS = 30_000;

interface LiveContextValue {
  status: LiveConnectionStatus;
}

const LiveContext = createContext<LiveContextValue | null>(null);

export function LiveUpdates({ companyId, children }: { companyId: string; children?: ReactNode }) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const routerRef = useRef(router);
  routerRef.current = router;
  const [status, setStatus] = useState<LiveConnectionStatus>("connecting");
  const visible = usePageVisible(HIDDEN_GRACE_MS);

  useEffect(() => {
    if (!visible) {
      setStatus("paused");
      return;
    }
    const batcher = createRefreshBatcher({
      flush: (batch) => {
        if (batch.everything) void queryClient.invalidateQueries();
        else
          for (const name of batch.routers)
            void queryClient.invalidateQueries({ queryKey: routerQueryKey(name) });
        routerRef.current.refresh();
      },
    });
    const connection = connectLiveEvents(
      liveEventsUrl(companyId),
      {
        onChange: (change) => batcher.add(routersToRefresh(change)),
        onResync: () => batcher.everything(),
        onStatus: setStatus,
      },
      // Every stream re-reads once it is subscribed, the first one too: a change committed after
      // the page's server render (or its hydrated queries) and before this subscription existed
      // would otherwise never reach the page (seen in the E2E suite: a run committing in that
      // window left the header "In progress"). A stream that replaces an earlier one (back from
      // the background, another company) may have missed changes in between for the same reason.
      { resyncOnFirstReady: true },
    );
    return () => {
      connection.close();
      batcher.cancel();
    };
  }, [companyId, queryClient, visible]);

  return <LiveContext.Provider value={{ status }}>{children}</LiveContext.Provider>;
}

/** The connection's state, or null outside <LiveUpdates>. */
export function useLiveStatus(): LiveConnectionStatus | null {
  return useContext(LiveContext)?.status ?? null;
}

const LABELS: Record<LiveConnectionStatus, { text: string; hint: string; dot: string }> = {
  connecting: { text: "Connecting…", hint: "Connecting to live updates.", dot: "bg-slate-300" },
  live: { text: "Live", hint: "Changes appear here as they happen.", dot: "bg-emerald-500" },
  delayed: {
    text: "Updates delayed",
    hint: "The server is reconnecting to the database; this page catches up when it is back.",
    dot: "bg-amber-500",
  },
  reconnecting: {
    text: "Reconnecting…",
    hint: "The connection dropped; this page catches up when it is back.",
    dot: "bg-amber-500",
  },
  paused: {
    text: "Paused",
    hint: "Live updates pause while this tab is in the background.",
    dot: "bg-slate-300",
  },
  stopped: {
    text: "Live updates off",
    hint: "Reload the page to see the latest changes.",
    dot: "bg-slate-400",
  },
};

/** A small, polite status pill; renders nothing outside <LiveUpdates>. */
export function LiveIndicator({ className = "" }: { className?: string }) {
  const status = useLiveStatus();
  if (!status) return null;
  const label = LABELS[status];
  return (
    <p
      role="status"
      aria-live="polite"
      title={label.hint}
      data-testid="live-indicator"
      data-state={status}
      className={`inline-flex items-center gap-1.5 rounded-full bg-white px-2.5 py-0.5 text-xs text-slate-600 ring-1 ring-slate-200 ${className}`}
    >
      <span aria-hidden="true" className={`size-2 rounded-full ${label.dot}`} />
      {label.text}
    </p>
  );
}
