// Runs an embedded server in a separate process for the cross-process tests:
//   tsx hold-server.ts <instanceRoot> <port>
// Prints one JSON line {url, pid, ownerPid} when ready; stops the server when stdin closes.
// A line `block <ms>` on stdin makes this process block its own event loop for that long (it
// prints `blocking` first): a busy parent that reads nothing, as a test runner in spawnSync was.
import { startEmbeddedPostgres } from "../../src/embedded/start";

const [instanceRoot, port] = process.argv.slice(2);
if (!instanceRoot || !port) throw new Error("usage: hold-server.ts <instanceRoot> <port>");
const server = await startEmbeddedPostgres({ instanceRoot, port: Number(port) });
process.stdout.write(
  `${JSON.stringify({ url: server.url, pid: server.pid, ownerPid: process.pid })}\n`,
);
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  pending += chunk;
  for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
    const line = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    const block = /^block (\d+)$/.exec(line);
    if (!block) continue;
    process.stdout.write("blocking\n", () => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(block[1]));
      process.stdout.write("unblocked\n");
    });
  }
});
process.stdin.on("end", () => {
  void server.stop().then(() => process.exit(0));
});
