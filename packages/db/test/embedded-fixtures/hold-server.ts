// Runs an embedded server in a separate process for the cross-process tests:
//   tsx hold-server.ts <instanceRoot> <port>
// Prints one JSON line {url, pid, ownerPid} when ready; stops the server when stdin closes.
import { startEmbeddedPostgres } from "../../src/embedded/start";

const [instanceRoot, port] = process.argv.slice(2);
if (!instanceRoot || !port) throw new Error("usage: hold-server.ts <instanceRoot> <port>");
const server = await startEmbeddedPostgres({ instanceRoot, port: Number(port) });
process.stdout.write(
  `${JSON.stringify({ url: server.url, pid: server.pid, ownerPid: process.pid })}\n`,
);
process.stdin.resume();
process.stdin.on("end", () => {
  void server.stop().then(() => process.exit(0));
});
