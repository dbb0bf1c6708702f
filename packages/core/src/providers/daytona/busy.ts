// Files are not swapped under a running agent (as the local provider's seed refuses): a seed or
// an input placement first asks the toolbox for its sessions (`process.listSessions`) and refuses
// while a command of one of copyback's exec sessions has no exit code yet.
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { DaytonaClient } from "./client";
import { EXEC_SESSION_PREFIX } from "./exec";

export async function refuseUnderRunningAgent(client: DaytonaClient, sandbox: Sandbox, leaseId: string, kept: string): Promise<void> {
  const sessions = await client.call("listing the sandbox's sessions", () => sandbox.process.listSessions(), { sandboxId: sandbox.id });
  const running = sessions.some((s) => s.sessionId.startsWith(EXEC_SESSION_PREFIX) && (s.commands ?? []).some((c) => typeof c.exitCode !== "number"));
  if (running) throw new DomainError("conflict", "provider_sandbox_busy", `An agent of lease ${leaseId} is still running; ${kept} not replaced.`);
}
