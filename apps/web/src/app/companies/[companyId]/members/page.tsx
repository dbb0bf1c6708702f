import type { Metadata } from "next";
import { MemberControls } from "~/components/members/member-controls";
import { ROLE_LABEL } from "~/components/members/role-labels";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { companyPermissions } from "../../../_lib/company";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Members" };

/** Members and roles. Everyone who can see the company sees the list; only members:manage sees controls. */
export default async function MembersPage({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const [result, can] = await Promise.all([
    pageCall(() => caller.members.list({ companyId })),
    companyPermissions(companyId),
  ]);
  if (!result.ok) return <AccessDenied title="Members" message={result.message} />;
  const manage = can.has("members:manage");

  return (
    <section aria-labelledby="members-title" className="space-y-5">
      <div>
        <h1 id="members-title" className="text-2xl font-semibold tracking-tight">
          Members
        </h1>
        <p className="mt-1 text-sm text-slate-600">
          {manage
            ? "Change roles, suspend or reactivate members. A company always keeps at least one active owner."
            : "The people in this company and their roles."}
        </p>
      </div>
      {result.data.length === 0 ? (
        <EmptyState title="No members yet" />
      ) : (
        <div className="card overflow-x-auto">
          <table className="w-full text-left text-sm" data-testid="members-table">
            <caption className="sr-only">Members of this company</caption>
            <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-4 py-2.5">
                  Name
                </th>
                <th scope="col" className="px-4 py-2.5">
                  Role
                </th>
                <th scope="col" className="px-4 py-2.5">
                  Status
                </th>
                {manage ? (
                  <th scope="col" className="px-4 py-2.5 text-right">
                    <span className="sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {result.data.map((member) => (
                <tr key={member.id} data-testid="member-row">
                  <td className="px-4 py-3">
                    <p className="font-medium text-slate-900">
                      {member.user.name}
                      {member.isYou ? (
                        <span className="ml-2 text-xs font-normal text-slate-500">(you)</span>
                      ) : null}
                    </p>
                    <p className="text-xs text-slate-500">{member.user.email}</p>
                  </td>
                  <td className="px-4 py-3 text-slate-700">{ROLE_LABEL[member.role]}</td>
                  <td className="px-4 py-3">
                    {member.status === "active" ? (
                      <span className="text-emerald-700">Active</span>
                    ) : (
                      <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-600">
                        Suspended
                      </span>
                    )}
                  </td>
                  {manage ? (
                    <td className="px-4 py-3">
                      <MemberControls
                        key={`${member.role}:${member.status}`}
                        companyId={companyId}
                        membershipId={member.id}
                        memberName={member.user.name}
                        role={member.role}
                        status={member.status}
                      />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
