import { serverCaller } from "~/trpc/server";
import { HealthBadge } from "./_components/health-badge";

export const dynamic = "force-dynamic";

const statusTone: Record<string, string> = {
  backlog: "bg-slate-100 text-slate-700",
  todo: "bg-sky-50 text-sky-700",
  in_progress: "bg-amber-50 text-amber-800",
  in_review: "bg-violet-50 text-violet-700",
  blocked: "bg-red-50 text-red-700",
  done: "bg-emerald-50 text-emerald-700",
  cancelled: "bg-slate-100 text-slate-500",
};

export default async function HomePage() {
  const caller = await serverCaller();
  const [company] = await caller.companies.list();
  if (!company) {
    return <p className="text-slate-600">No company yet. Run the seed (`pnpm --filter @copyback/db seed`) or create one.</p>;
  }
  const issues = await caller.issues.list({ companyId: company.id, limit: 50 });
  return (
    <section className="space-y-6">
      <div className="flex items-center justify-between">
        <h1 className="text-2xl font-semibold" data-testid="company-name">
          {company.name}
        </h1>
        <HealthBadge />
      </div>
      <ul className="divide-y divide-slate-200 overflow-hidden rounded-lg border border-slate-200 bg-white" aria-label="Issues">
        {issues.map((issue) => (
          <li key={issue.id} className="flex items-center gap-4 px-4 py-3" data-testid="issue-row">
            <span className="w-20 shrink-0 font-mono text-xs text-slate-500">{issue.identifier}</span>
            <span className="flex-1 truncate">{issue.title}</span>
            <span className="text-xs text-slate-500">{issue.assigneeAgent?.name ?? "Unassigned"}</span>
            <span className={`rounded px-2 py-0.5 text-xs ${statusTone[issue.status] ?? ""}`}>{issue.status.replace("_", " ")}</span>
          </li>
        ))}
      </ul>
      <p className="text-xs text-slate-400">
        <a href="/api/health">API health</a>
      </p>
    </section>
  );
}
