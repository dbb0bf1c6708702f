import "server-only";
import { headers } from "next/headers";
import { cache } from "react";
import { createCaller } from "~/server/routers/_app";
import { createContext } from "~/server/trpc";

/** A tRPC caller for server components: the same procedures, checks and errors as the HTTP API. */
export const serverCaller = cache(async () => createCaller(await createContext({ headers: new Headers(await headers()) })));
