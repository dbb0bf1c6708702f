"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import type { Route } from "next";

export interface SectionLink {
  href: Route;
  label: string;
}

/** The company's sections; the current one is marked for screen readers and sighted users alike. */
export function SectionNav({ links }: { links: readonly SectionLink[] }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Company sections">
      <ul className="flex gap-1 overflow-x-auto">
        {links.map((link) => {
          const current =
            pathname === link.href ||
            pathname.startsWith(`${link.href}/`) ||
            (link.label === "Issues" && pathname.includes("/runs/"));
          return (
            <li key={link.href}>
              <Link
                href={link.href}
                aria-current={current ? "page" : undefined}
                className="block border-b-2 border-transparent px-3 py-2.5 text-sm font-medium text-slate-600 hover:border-slate-300 hover:text-slate-900 aria-[current=page]:border-indigo-600 aria-[current=page]:text-indigo-700"
              >
                {link.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
