import Link from "next/link";
import { HealthBadge } from "~/app/_components/health-badge";
import { SignOutButton } from "~/app/(auth)/_components/sign-out-button";
import { companyPath } from "~/components/nav/paths";
import { CompanySwitcher } from "~/components/shell/company-switcher";
import { LiveIndicator, LiveUpdates } from "~/components/live/live-updates";
import { Identity, identityOf } from "~/components/shell/identity";
import { SectionNav, type SectionLink } from "~/components/shell/section-nav";
import { serverCaller } from "~/trpc/server";
import { loadCompany } from "../../_lib/company";
import { pageData } from "../../_lib/page-call";

/** The console shell of one company: switcher, sections, identity; the page below it. */
export default async function CompanyLayout({
  children,
  params,
}: {
  children: React.ReactNode;
  params: Promise<{ companyId: string }>;
}) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const [company, companies, me] = await Promise.all([
    loadCompany(companyId),
    pageData(() => caller.companies.list()),
    caller.me.get(),
  ]);
  const can = new Set(company.permissions);

  const links: SectionLink[] = [{ href: companyPath(companyId, "issues"), label: "Issues" }];
  // Every open recovery action of the company, for whoever may read its tasks.
  if (can.has("issues:read"))
    links.push({ href: companyPath(companyId, "recovery"), label: "Recovery" });
  // Retained sandboxes: for the runtime operators who may act on them.
  if (can.has("runtime:manage"))
    links.push({ href: companyPath(companyId, "sandboxes"), label: "Sandboxes" });
  // Environments: the same operators, who set up where runs go (owners and admins also create them).
  if (can.has("runtime:manage"))
    links.push({ href: companyPath(companyId, "environments"), label: "Environments" });
  if (can.has("activity:read"))
    links.push({ href: companyPath(companyId, "activity"), label: "Activity" });
  if (can.has("company:read"))
    links.push({ href: companyPath(companyId, "members"), label: "Members" });
  if (can.has("api_keys:manage"))
    links.push({ href: companyPath(companyId, "settings/api-keys"), label: "API keys" });

  return (
    // Live updates: changes pushed by the server refresh this company's pages in place.
    <LiveUpdates companyId={company.id}>
      <div className="flex min-h-screen flex-col">
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-6xl items-center justify-between gap-4 px-6 pt-3">
            <div className="flex items-center gap-3">
              <Link href="/" className="text-sm font-bold tracking-tight text-indigo-700">
                Copyback
              </Link>
              <span aria-hidden="true" className="text-slate-300">
                /
              </span>
              <CompanySwitcher
                current={{ id: company.id, name: company.name }}
                companies={companies}
              />
            </div>
            <div className="flex items-center gap-4">
              <LiveIndicator />
              <Identity identity={identityOf(me)} />
              {me.kind === "board_user" && me.via === "session" ? (
                <SignOutButton className="btn btn-secondary text-xs" />
              ) : null}
            </div>
          </div>
          <div className="mx-auto max-w-6xl px-4">
            <SectionNav links={links} />
          </div>
        </header>
        <main id="main" className="mx-auto w-full max-w-6xl flex-1 px-6 py-8">
          {children}
        </main>
        <footer className="mx-auto flex w-full max-w-6xl items-center justify-end gap-3 px-6 pb-6 text-xs text-slate-400">
          <HealthBadge />
        </footer>
      </div>
    </LiveUpdates>
  );
}
