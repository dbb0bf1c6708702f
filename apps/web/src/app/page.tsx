import { redirect } from "next/navigation";
import { serverCaller } from "~/trpc/server";
import { pageData } from "./_lib/page-call";
import { companyPath } from "~/components/nav/paths";

export const dynamic = "force-dynamic";

/** `/` opens the first company the principal can see, or explains that there is none. */
export default async function HomePage() {
  const caller = await serverCaller();
  const companies = await pageData(() => caller.companies.list());
  const first = companies[0];
  if (first) redirect(companyPath(first.id, "issues"));
  return (
    <main
      id="main"
      className="mx-auto flex min-h-screen max-w-lg flex-col justify-center px-6 py-16"
    >
      <p className="text-sm font-semibold tracking-tight text-indigo-700">Copyback</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight text-slate-900">
        No company to show yet
      </h1>
      <p className="mt-3 text-slate-600">
        You are not a member of any company. Ask a company owner to invite you, or load the demo
        data with{" "}
        <code className="rounded bg-slate-100 px-1 py-0.5 text-sm">
          pnpm --filter @copyback/db seed
        </code>
        .
      </p>
    </main>
  );
}
