// Just enough of RFC 6455 for the SDK's follow-mode session logs: accept the upgrade,
// send binary frames, close. The emulator never needs to read client frames.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export interface ServerSocket {
  sendBinary(data: Buffer): void;
  close(): void;
}

export function acceptWebSocket(req: IncomingMessage, socket: Duplex): ServerSocket {
  const key = req.headers["sec-websocket-key"];
  if (typeof key !== "string") {
    socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    throw new Error("not a websocket upgrade");
  }
  const accept = createHash("sha1").update(key + GUID).digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  // Client frames (pings, the close reply) are read and dropped.
  socket.on("data", () => undefined);
  socket.on("error", () => undefined);
  return {
    sendBinary(data) {
      if (!socket.writable) return;
      socket.write(Buffer.concat([frameHeader(0x2, data.length), data]));
    },
    close() {
      if (!socket.writable) return;
      const code = Buffer.from([0x03, 0xe8]);
      socket.write(Buffer.concat([frameHeader(0x8, code.length), code]));
      socket.end();
    },
  };
}

function frameHeader(opcode: number, length: number): Buffer {
  if (length < 126) return Buffer.from([0x80 | opcode, length]);
  if (length < 65536) {
    const header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(length, 2);
    return header;
  }
  const header = Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}
