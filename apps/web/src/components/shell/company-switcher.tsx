"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef } from "react";
import { companyPath } from "~/components/nav/paths";

interface CompanyOption {
  id: string;
  name: string;
}

/**
 * The company switcher: a disclosure listing the companies the principal can see. Built on
 * <details>, so it opens with the keyboard and works before JavaScript loads; it closes itself
 * after a switch and on Escape.
 */
export function CompanySwitcher({
  current,
  companies,
}: {
  current: CompanyOption;
  companies: readonly CompanyOption[];
}) {
  const details = useRef<HTMLDetailsElement>(null);
  const pathname = usePathname();
  useEffect(() => {
    if (details.current) details.current.open = false;
  }, [pathname]);

  return (
    <details
      ref={details}
      className="relative"
      onKeyDown={(event) => {
        if (event.key === "Escape" && details.current?.open) {
          details.current.open = false;
          details.current.querySelector("summary")?.focus();
        }
      }}
    >
      <summary
        className="flex cursor-pointer list-none items-center gap-2 rounded-md px-2 py-1 text-sm font-semibold text-slate-900 hover:bg-slate-100 [&::-webkit-details-marker]:hidden"
        aria-label={`Company: ${current.name}. Switch company`}
      >
        <span data-testid="company-name">{current.name}</span>
        <svg
          aria-hidden="true"
          viewBox="0 0 20 20"
          className="h-4 w-4 text-slate-500"
          fill="currentColor"
        >
          <path d="M5.23 7.21a.75.75 0 0 1 1.06.02L10 11.06l3.71-3.83a.75.75 0 1 1 1.08 1.04l-4.25 4.39a.75.75 0 0 1-1.08 0L5.21 8.27a.75.75 0 0 1 .02-1.06Z" />
        </svg>
      </summary>
      <nav
        aria-label="Companies"
        className="absolute left-0 z-20 mt-1 w-64 rounded-lg border border-slate-200 bg-white p-1 shadow-lg"
      >
        <ul>
          {companies.map((company) => (
            <li key={company.id}>
              <Link
                href={companyPath(company.id, "issues")}
                aria-current={company.id === current.id ? "true" : undefined}
                className="flex items-center justify-between rounded-md px-3 py-2 text-sm text-slate-700 hover:bg-slate-50 aria-[current=true]:font-semibold aria-[current=true]:text-indigo-700"
              >
                {company.name}
                {company.id === current.id ? <span className="sr-only">(current)</span> : null}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </details>
  );
}
