import type { Metadata } from "next";
import { AccessDenied } from "~/components/ui/access-denied";
import { serverCaller } from "~/trpc/server";
import { pageCall, pageData } from "../../../../_lib/page-call";
import { AgentKeys } from "./_components/agent-keys";
import { BoardKeys } from "./_components/board-keys";

export const metadata: Metadata = { title: "API keys" };
export const dynamic = "force-dynamic";

/** Board and agent API keys of one company (api_keys:manage): list, create (secret shown once), revoke. */
export default async function ApiKeysPage({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const [boardKeys, agentKeys, me] = await Promise.all([
    pageCall(() => caller.apiKeys.list({ companyId })),
    pageCall(() => caller.agentKeys.list({ companyId })),
    caller.me.get(),
  ]);
  if (!boardKeys.ok) return <AccessDenied title="API keys" message={boardKeys.message} />;
  if (!agentKeys.ok) return <AccessDenied title="API keys" message={agentKeys.message} />;
  const agents = (await pageData(() => caller.agents.list({ companyId }))).filter((agent) => !agent.archived);
  // The local board has no user of its own: it picks the member whose role a board key carries.
  const members =
    me.kind === "local_board"
      ? (await pageData(() => caller.members.list({ companyId })))
          .filter((m) => m.status === "active")
          .map((m) => ({ id: m.user.id, label: `${m.user.name} (${m.role.replace("_", " ")})` }))
      : null;

  return (
    <div className="space-y-10">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">API keys</h1>
        <p className="mt-1 max-w-2xl text-sm text-slate-600">
          Keys let scripts, test suites and agents call Copyback&apos;s API with <code className="rounded bg-slate-100 px-1 text-xs">Authorization: Bearer &lt;key&gt;</code>. A
          key is shown once, when it is created; Copyback keeps only a fingerprint of it. Revoking a key stops it at once.
        </p>
      </div>
      <BoardKeys companyId={companyId} keys={boardKeys.data} members={members} signedInWithKey={me.kind === "board_user" && me.via === "board_api_key"} />
      <AgentKeys companyId={companyId} keys={agentKeys.data} agents={agents} signedInWithKey={me.kind === "board_user" && me.via === "board_api_key"} />
    </div>
  );
}
