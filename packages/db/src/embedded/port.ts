// Checked before starting so the user gets a message naming the port and the setting, rather than
// a server log line. (The server's own bind error is mapped the same way, for the race.)
import net from "node:net";
import { EmbeddedPostgresError } from "./errors";
import { LISTEN_HOST } from "./layout";

export function portInUseError(port: number): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    "PORT_IN_USE",
    `Port ${port} on ${LISTEN_HOST} is already in use by another program, so the embedded PostgreSQL cannot listen there. ` +
      `Stop that program or choose another port with COPYBACK_DB_PORT (for example COPYBACK_DB_PORT=${port === 65_535 ? port - 1 : port + 1}).`,
  );
}

export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? portInUseError(port)
          : new EmbeddedPostgresError(
              "INVALID_PORT",
              `Cannot listen on ${LISTEN_HOST}:${port}: ${error.message}`,
              { cause: error },
            ),
      );
    });
    probe.listen({ port, host: LISTEN_HOST, exclusive: true }, () => probe.close(() => resolve()));
  });
}
