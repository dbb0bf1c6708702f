import type { Metadata } from "next";
import type { Route } from "next";
import { redirect } from "next/navigation";
import { env } from "~/env";
import { serverCaller } from "~/trpc/server";
import { safeNextPath } from "../_components/safe-next";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

/**
 * Sign-in. Authenticated mode: email and password. Local mode: the launcher's sign-in link (the
 * console trusts the person at this machine's console, not every local process). Signed-in
 * visitors go straight on.
 */
export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNextPath((await searchParams).next);
  const me = await (await serverCaller()).me.get();
  if (me.kind === "local_board" || (me.kind === "board_user" && me.via === "session")) redirect(next as Route);
  if (env().COPYBACK_DEPLOYMENT_MODE === "local") return <LocalSignIn />;

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

function LocalSignIn() {
  return (
    <main id="main" className="flex min-h-screen items-center justify-center px-6 py-16">
      <div className="w-full max-w-md">
        <p className="text-sm font-bold tracking-tight text-indigo-700">Copyback</p>
        <h1 className="mt-2 text-2xl font-semibold tracking-tight text-slate-900">Open the console&apos;s sign-in link</h1>
        <div className="card mt-6 space-y-3 px-6 py-6 text-sm text-slate-700" data-testid="local-sign-in">
          <p>
            This console trusts the person at this machine, not every program on it. Open the sign-in link that <code>npm start</code> printed
            (<code>…/api/local-sign-in?token=…</code>) in this browser.
          </p>
          <p>
            The link is built from the secret in <code>$COPYBACK_HOME/console-secret</code> (readable by its owner only). Scripts use a board API key instead.
          </p>
        </div>
      </div>
    </main>
  );
}
