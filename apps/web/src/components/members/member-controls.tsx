"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { Role } from "@copyback/core/auth";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";
import { ROLE_OPTIONS } from "./role-labels";

interface Props {
  companyId: string;
  membershipId: string;
  memberName: string;
  role: Role;
  status: "active" | "suspended";
}

/** Role change and suspend/reactivate for one member (rendered only for members:manage). */
export function MemberControls({ companyId, membershipId, memberName, role, status }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [choice, setChoice] = useState<Role>(role);
  const onSuccess = () => router.refresh();
  const updateRole = useMutation(trpc.members.updateRole.mutationOptions({ onSuccess }));
  const setStatus = useMutation(trpc.members.setStatus.mutationOptions({ onSuccess }));
  const pending = updateRole.isPending || setStatus.isPending;
  const error = updateRole.error ?? setStatus.error;
  const roleId = `role-${membershipId}`;

  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center justify-end gap-2">
        <form
          className="flex items-center gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            setStatus.reset();
            updateRole.mutate({ companyId, membershipId, role: choice });
          }}
        >
          <label htmlFor={roleId} className="sr-only">
            Role of {memberName}
          </label>
          <select
            id={roleId}
            value={choice}
            onChange={(event) => setChoice(event.target.value as Role)}
            className="field"
            data-testid="member-role-select"
          >
            {ROLE_OPTIONS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
          <button type="submit" className="btn btn-secondary" disabled={pending || choice === role}>
            Save<span className="sr-only"> role of {memberName}</span>
          </button>
        </form>
        <button
          type="button"
          className="btn btn-secondary"
          disabled={pending}
          onClick={() => {
            updateRole.reset();
            setStatus.mutate({
              companyId,
              membershipId,
              status: status === "active" ? "suspended" : "active",
            });
          }}
        >
          {status === "active" ? "Suspend" : "Reactivate"}
          <span className="sr-only"> {memberName}</span>
        </button>
      </div>
      <p role="alert" className="text-right text-xs text-red-700">
        {error ? userMessageOf(error) : null}
      </p>
    </div>
  );
}
