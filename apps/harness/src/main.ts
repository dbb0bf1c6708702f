// The harness process: parses its configuration, listens, prints one JSON line when it does
// (`{"msg":"listening","port":N}`), logs one JSON line per answer (never a token or a receipt), and
// exits 0 on SIGTERM or SIGINT once its server has closed.
import { parseHarnessEnv } from "./env";
import { createHarnessServer } from "./server";
import { importSigner } from "./sign-receipt";
import { readHostBootId } from "./worker-cgroup-check";

const log = (entry: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), service: "copyback-harness", ...entry })}\n`);

let env;
try {
  env = parseHarnessEnv();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
const signer = await importSigner(env.HARNESS_SIGNING_KEY, env.HARNESS_SIGNING_KID, env.HARNESS_RECEIPT_TTL_SECONDS);
const server = createHarnessServer({
  fleetToken: env.HARNESS_FLEET_TOKEN,
  stacks: env.HARNESS_STACKS,
  ...(env.RAILWAY_API_TOKEN ? { railway: { url: env.RAILWAY_API_URL, token: env.RAILWAY_API_TOKEN, timeoutMs: env.RAILWAY_TIMEOUT_MS } } : {}),
  bootId: readHostBootId,
  signer,
  log,
});
server.listen(env.HARNESS_PORT, env.HARNESS_HOST, () => {
  const address = server.address();
  log({ level: "info", msg: "listening", host: env.HARNESS_HOST, port: typeof address === "object" && address ? address.port : env.HARNESS_PORT, kid: signer.kid, stacks: Object.keys(env.HARNESS_STACKS).length });
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    log({ level: "info", msg: "stopping", signal });
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
