// The authorization matrix in local deployment mode: the trusted local board (a request addressed
// to the loopback name), a DNS-rebinding page (its own Host: anonymous), and bearer keys, which
// act the same in both modes. Every procedure and route handler; see
// authorization-matrix.integration-test.ts for the authenticated-mode principals and the coverage checks.
import { afterAll, beforeAll } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { appRouter } from "~/server/routers/_app";
import { configureWebApp, disconnectWebApp } from "./auth-fixture";
import { enumerateProcedures, enumerateRoutes } from "./matrix/enumerate";
import { stopLiveFeed } from "./matrix/live-feed";
import { LOCAL_MODE_PRINCIPALS } from "./matrix/principals";
import { describeAuthorizationMatrix } from "./matrix/run-matrix";
import { buildMatrixWorld, type MatrixWorld } from "./matrix/world";

const testDb = useTestDatabase();
let world: MatrixWorld;

beforeAll(async () => {
  configureWebApp(testDb.url(), "local");
  world = await buildMatrixWorld(testDb.prisma(), "local");
});
afterAll(async () => {
  await stopLiveFeed();
  await disconnectWebApp();
});

describeAuthorizationMatrix({
  mode: "local",
  principals: LOCAL_MODE_PRINCIPALS,
  world: () => world,
  procedures: enumerateProcedures(appRouter),
  routes: await enumerateRoutes(),
});
