// Starts the Daytona emulator for the torture suite and E2E:
//   tsx test/support/daytona/start-daytona-emulator.ts --root <dir> [--port N] [--api-key KEY]
// prints one JSON line {apiUrl, apiKey, root} and serves until SIGINT/SIGTERM.
// Its clock is advanced by real time (checked each second), so timers fire as in Daytona.
import { mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { manualClock } from "./clock";
import { startDaytonaEmulator } from "./emulator";

const { values } = parseArgs({ options: { root: { type: "string" }, port: { type: "string" }, "api-key": { type: "string" } } });
if (!values.root) {
  process.stderr.write("usage: start-daytona-emulator --root <dir> [--port N] [--api-key KEY]\n");
  process.exit(2);
}
const port = values.port === undefined ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`--port must be 0..65535, got ${values.port}\n`);
  process.exit(2);
}
mkdirSync(values.root, { recursive: true });
const clock = manualClock(Date.now());
const emulator = await startDaytonaEmulator({ root: values.root, port, apiKey: values["api-key"], clock });
const ticker = setInterval(() => clock.advance(Math.max(0, Date.now() - clock.now())), 1000);
process.stdout.write(`${JSON.stringify({ apiUrl: emulator.apiUrl, apiKey: emulator.apiKey, root: values.root })}\n`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    clearInterval(ticker);
    void emulator.close().then(() => process.exit(0));
  });
}
