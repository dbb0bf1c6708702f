// How pages turn procedure errors into navigation: a missing (or other company's) resource is a
// 404 page, an anonymous visitor goes to sign-in, and a lack of permission renders a calm
// "no access" panel instead of an error screen (server errors never reach board users as traces).
import "server-only";
import { TRPCError } from "@trpc/server";
import { notFound, redirect } from "next/navigation";

export const SIGN_IN_PATH = "/sign-in";

export type PageResult<T> =
  { ok: true; data: T } | { ok: false; reason: "forbidden"; message: string };

/** Runs a server-side procedure call for a page; see the file comment for what each error becomes. */
export async function pageCall<T>(call: () => Promise<T>): Promise<PageResult<T>> {
  try {
    return { ok: true, data: await call() };
  } catch (error) {
    if (error instanceof TRPCError) {
      // BAD_REQUEST: a malformed id or cursor in the URL is a page that does not exist.
      if (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST") notFound();
      if (error.code === "UNAUTHORIZED") redirect(SIGN_IN_PATH as never);
      if (error.code === "FORBIDDEN")
        return { ok: false, reason: "forbidden", message: error.message };
    }
    throw error;
  }
}

/** Like pageCall, for calls a page cannot render without: a refusal also becomes a 404. */
export async function pageData<T>(call: () => Promise<T>): Promise<T> {
  const result = await pageCall(call);
  if (!result.ok) notFound();
  return result.data;
}
