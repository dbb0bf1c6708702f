"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";

/** Posts to the task's conversation (issues:write). Ctrl/⌘+Enter sends. */
export function MessageComposer({ companyId, issueId }: { companyId: string; issueId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [body, setBody] = useState("");
  const post = useMutation(
    trpc.issues.addMessage.mutationOptions({
      onSuccess: async () => {
        setBody("");
        await queryClient.invalidateQueries({
          queryKey: trpc.issues.messages.queryKey({ companyId, issueId }),
        });
        router.refresh();
      },
    }),
  );
  const send = () => {
    if (body.trim() === "" || post.isPending) return;
    post.mutate({ companyId, issueId, body });
  };

  return (
    <form
      className="space-y-2"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label htmlFor="message-body" className="block text-sm font-medium text-slate-700">
        Add a message
      </label>
      <textarea
        id="message-body"
        name="body"
        rows={3}
        value={body}
        maxLength={20_000}
        onChange={(event) => setBody(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) {
            event.preventDefault();
            send();
          }
        }}
        aria-describedby="message-hint"
        className="field block w-full resize-y"
        placeholder="Write to the agent or the team…"
      />
      <div className="flex items-center justify-between gap-3">
        <p id="message-hint" className="text-xs text-slate-500">
          Ctrl+Enter to send
        </p>
        <button
          type="submit"
          className="btn btn-primary"
          disabled={post.isPending || body.trim() === ""}
        >
          {post.isPending ? "Posting…" : "Post message"}
        </button>
      </div>
      <p role="alert" className="text-sm text-red-700">
        {post.isError ? userMessageOf(post.error) : null}
      </p>
    </form>
  );
}
