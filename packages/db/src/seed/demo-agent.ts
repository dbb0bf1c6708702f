// The demo agent's adapter: a command run in the sandbox (argv, no shell features beyond sh -c).
// It says what it does (the run log shows agent output), appends a line to notes/builder.log
// (a file that then lands in the host workspace through copyback) and submits its result through
// the process adapter's result file (COPYBACK_RESULT_FILE, set by the provider outside the
// exported workspace): outcome in_review, so the task moves to review when the run commits.
import type { PrismaClient } from "../generated/prisma/client";

const RESULT_DOCUMENT = JSON.stringify({
  schema: "copyback.run-result.v1",
  outcome: "in_review",
  summary: "Builder appended a line to notes/builder.log.",
});

export const BUILDER_COMMAND: readonly string[] = [
  "/bin/sh",
  "-c",
  [
    'echo "Builder: writing notes/builder.log"',
    "mkdir -p notes",
    'printf "Built by Builder at %s\\n" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> notes/builder.log',
    `printf '%s' '${RESULT_DOCUMENT}' > "$COPYBACK_RESULT_FILE"`,
    'echo "Builder: result submitted"',
  ].join(" && "),
];

const RESEARCH_RESULT = JSON.stringify({
  schema: "copyback.run-result.v1",
  outcome: "in_review",
  summary: "Researcher wrote twelve findings to notes/research.md.",
});

/**
 * The slow demo agent: about a minute of work, its file written from the first second and grown
 * every five, so there is time to rehearse what happens to unpublished edits (README "Rehearsing
 * recovery"): Stop it, SIGKILL the worker while it works, kill the agent itself. The partial
 * notes/research.md then stays in the retained sandbox for the file-recovery card.
 */
export const RESEARCHER_COMMAND: readonly string[] = [
  "/bin/sh",
  "-c",
  [
    'echo "Researcher: drafting notes/research.md"',
    "mkdir -p notes",
    'printf "Research notes, started %s\n" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> notes/research.md',
    "i=0",
    'while [ "$i" -lt 12 ]; do sleep 5; i=$((i + 1)); printf "finding %s\n" "$i" >> notes/research.md; echo "Researcher: finding $i of 12"; done',
    `printf '%s' '${RESEARCH_RESULT}' > "$COPYBACK_RESULT_FILE"`,
    'echo "Researcher: result submitted"',
  ].join(" && "),
];

/** The command of seeds before the result file existed: upgraded in place, nothing else is touched. */
export const PREVIOUS_BUILDER_COMMANDS: ReadonlyArray<readonly string[]> = [
  ["/bin/sh", "-c", 'mkdir -p notes && printf "Built by Builder at %s\\n" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> notes/builder.log'],
];

/**
 * An instance seeded before the demo agent wrote its result would fail every demo run with
 * agent_exited_without_result; its Builder gets the current command, but only while the command
 * is exactly a previous seed's (a command someone edited is theirs). Returns whether it changed.
 */
export async function upgradeDemoAgentCommand(prisma: PrismaClient, companyId: string): Promise<boolean> {
  const agent = await prisma.agent.findUnique({ where: { companyId_name: { companyId, name: "Builder" } }, select: { id: true, command: true } });
  if (!agent || !PREVIOUS_BUILDER_COMMANDS.some((old) => sameArgv(old, agent.command))) return false;
  const updated = await prisma.agent.updateMany({ where: { id: agent.id, command: { equals: agent.command } }, data: { command: [...BUILDER_COMMAND] } });
  return updated.count === 1;
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
