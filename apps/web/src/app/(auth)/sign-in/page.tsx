import type { Metadata } from "next";
import type { Route } from "next";
import { redirect } from "next/navigation";
import { serverCaller } from "~/trpc/server";
import { safeNextPath } from "../_components/safe-next";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

/** Sign-in (authenticated mode). Local mode and signed-in visitors go straight on. */
export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNextPath((await searchParams).next);
  const me = await (await serverCaller()).me.get();
  if (me.kind === "local_board" || (me.kind === "board_user" && me.via === "session")) redirect(next as Route);

  return (
    <main id="main" className="flex min-h-screen items-center justify-center px-6 py-16">
      <div className="w-full max-w-sm">
        <p className="text-sm font-bold tracking-tight text-indigo-700">Copyback</p>
        <h1 className="mt-2 text-2xl font-semibold tracking-tight text-slate-900">Sign in to the console</h1>
        <p className="mt-2 text-sm text-slate-600">Use the email address and password your company administrator gave you.</p>
        <div className="card mt-6 px-6 py-6">
          <SignInForm next={next} />
        </div>
      </div>
    </main>
  );
}
