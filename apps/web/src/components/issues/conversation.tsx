"use client";

import { useQuery } from "@tanstack/react-query";
import { Timestamp } from "~/components/format/timestamp";
import type { RouterOutputs } from "~/components/trpc-types";
import { useTRPC } from "~/trpc/react";

type Messages = RouterOutputs["issues"]["messages"];

const AUTHOR_TONE: Record<Messages["messages"][number]["author"]["type"], string> = {
  user: "bg-indigo-100 text-indigo-800",
  local_board: "bg-indigo-100 text-indigo-800",
  agent: "bg-emerald-100 text-emerald-800",
  system: "bg-slate-200 text-slate-700",
};

const AUTHOR_ROLE: Record<Messages["messages"][number]["author"]["type"], string> = {
  user: "",
  local_board: "",
  agent: "Agent",
  system: "System",
};

/** The task's conversation; a TanStack query, so live updates and new posts refresh it in place. */
export function Conversation({
  companyId,
  issueId,
  initial,
}: {
  companyId: string;
  issueId: string;
  initial: Messages;
}) {
  const trpc = useTRPC();
  const { data } = useQuery(
    trpc.issues.messages.queryOptions({ companyId, issueId }, { initialData: initial }),
  );
  const { messages, truncated } = data;

  if (messages.length === 0) return <p className="text-sm text-slate-500">No messages yet.</p>;
  return (
    <div>
      {truncated ? (
        <p className="mb-3 text-xs text-slate-500">
          Showing the latest {messages.length} messages.
        </p>
      ) : null}
      <ol className="space-y-4" aria-label="Messages" data-testid="conversation">
        {messages.map((message, index) => {
          const previous = messages[index - 1];
          const initials = message.author.name
            .split(/\s+/)
            .map((part) => part[0])
            .join("")
            .slice(0, 2)
            .toUpperCase();
          return (
            <li key={message.id} data-testid="message">
              {previous && previous.generation !== message.generation ? (
                <p className="mb-4 flex items-center gap-3 text-xs text-slate-400" role="separator">
                  <span className="h-px flex-1 bg-slate-200" />
                  New conversation
                  <span className="h-px flex-1 bg-slate-200" />
                </p>
              ) : null}
              <article className="flex gap-3">
                <span
                  aria-hidden="true"
                  className={`flex h-8 w-8 shrink-0 items-center justify-center rounded-full text-xs font-semibold ${AUTHOR_TONE[message.author.type]}`}
                >
                  {initials}
                </span>
                <div className="min-w-0 flex-1">
                  <header className="flex flex-wrap items-baseline gap-x-2 text-sm">
                    <span className="font-medium text-slate-900">{message.author.name}</span>
                    {AUTHOR_ROLE[message.author.type] ? (
                      <span className="text-xs text-slate-500">
                        {AUTHOR_ROLE[message.author.type]}
                      </span>
                    ) : null}
                    <Timestamp date={message.createdAt} className="text-xs text-slate-500" />
                  </header>
                  <p className="mt-1 whitespace-pre-wrap break-words text-sm text-slate-800">
                    {message.body}
                  </p>
                </div>
              </article>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
