"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { DEFAULT_MAX_ATTACHMENT_BYTES } from "@copyback/core/ui";
import { formatBytes } from "~/components/format/bytes";
import { Timestamp } from "~/components/format/timestamp";
import type { RouterOutputs } from "~/components/trpc-types";
import { useTRPC } from "~/trpc/react";
import { uploadAttachment, type UploadProgress } from "./upload-attachment";

type Attachments = RouterOutputs["issues"]["attachments"];

/**
 * The task's attachments: name, size, a short hash (the full sha256 on hover) and a download.
 * Writers get an upload control; the bytes go to the REST route (POST /api/issues/:id/attachments),
 * the list is the issues.attachments query.
 */
export function IssueAttachments({
  companyId,
  issueId,
  initial,
  canWrite,
}: {
  companyId: string;
  issueId: string;
  initial: Attachments;
  canWrite: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data } = useQuery(
    trpc.issues.attachments.queryOptions({ companyId, issueId }, { initialData: initial }),
  );
  const input = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [error, setError] = useState<string | null>(null);

  const upload = async (file: File) => {
    setError(null);
    // The server refuses it too (413); saying so before sending saves the wait.
    if (file.size > DEFAULT_MAX_ATTACHMENT_BYTES) {
      setError(`${file.name} is ${formatBytes(file.size)}; attachments can be at most ${formatBytes(DEFAULT_MAX_ATTACHMENT_BYTES)}.`);
      return;
    }
    setProgress({ loaded: 0, total: file.size });
    const outcome = await uploadAttachment(issueId, file, setProgress);
    setProgress(null);
    if (input.current) input.current.value = "";
    if (!outcome.ok) {
      setError(outcome.message);
      return;
    }
    await queryClient.invalidateQueries({ queryKey: trpc.issues.attachments.queryKey({ companyId, issueId }) });
  };

  return (
    <div className="space-y-3">
      {data.length === 0 ? (
        <p className="text-sm text-slate-500">No attachments.</p>
      ) : (
        <ul className="divide-y divide-slate-100 text-sm" aria-label="Attachments" data-testid="attachments">
          {data.map((attachment) => (
            <li key={attachment.id} className="flex flex-wrap items-baseline gap-x-3 gap-y-1 py-2" data-testid="attachment">
              <a
                href={attachment.contentUrl}
                download={attachment.fileName}
                className="min-w-0 break-all font-medium text-indigo-700 hover:underline"
              >
                {attachment.fileName}
              </a>
              <span className="text-xs text-slate-500">{formatBytes(attachment.sizeBytes)}</span>
              <code className="font-mono text-xs text-slate-500" title={`sha256 ${attachment.sha256}`}>
                {attachment.sha256.slice(0, 12)}
              </code>
              <span className="text-xs text-slate-400">
                <Timestamp date={attachment.createdAt} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {canWrite ? (
        <div className="space-y-1">
          <label className="inline-flex items-center gap-2 text-sm">
            <span className="sr-only">Attach a file</span>
            <input
              ref={input}
              type="file"
              data-testid="attachment-input"
              disabled={progress !== null}
              onChange={(event) => {
                const file = event.target.files?.[0];
                if (file) void upload(file);
              }}
              className="block text-sm text-slate-600 file:mr-3 file:rounded file:border-0 file:bg-slate-100 file:px-3 file:py-1.5 file:text-sm file:font-medium file:text-slate-700 hover:file:bg-slate-200"
            />
          </label>
          {progress ? (
            <p role="status" className="text-xs text-slate-500" data-testid="attachment-progress">
              Uploading… {progress.total > 0 ? `${Math.floor((progress.loaded / progress.total) * 100)}%` : null}
            </p>
          ) : (
            <p className="text-xs text-slate-500">Up to {formatBytes(DEFAULT_MAX_ATTACHMENT_BYTES)} per file.</p>
          )}
          <p role="alert" className="text-sm text-red-700" data-testid="attachment-error">
            {error}
          </p>
        </div>
      ) : null}
    </div>
  );
}
