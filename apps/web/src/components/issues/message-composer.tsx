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
  const [notice, setNotice] = useState<string | null>(null);
  const post = useMutation(
    trpc.issues.addMessage.mutationOptions({
      onSuccess: async (posted) => {
        setBody("");
        // R-RR-7: saved either way; while a recovery action is open, say why no agent sees it yet.
        const what = posted.newConversation ? "A new conversation was started" : "Your message was saved";
        setNotice(posted.deliveryHeld ? `${what}. The agent will see it once the recovery is resolved: ${posted.deliveryHeld.reason}.` : posted.newConversation ? `${what}.` : null);
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
          Ctrl+Enter to send · /new starts a new conversation
        </p>
        <button
          type="submit"
          className="btn btn-primary"
          disabled={post.isPending || body.trim() === ""}
        >
          {post.isPending ? "Posting…" : "Post message"}
        </button>
      </div>
      {notice ? (
        <p data-testid="message-notice" role="status" className="text-sm text-amber-800">
          {notice}
        </p>
      ) : null}
      <p role="alert" className="text-sm text-red-700">
        {post.isError ? userMessageOf(post.error) : null}
      </p>
    </form>
  );
}
