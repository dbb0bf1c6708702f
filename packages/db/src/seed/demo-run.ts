// One finished demo run, so that a fresh console has a run to inspect: the run, its local run
// log, its committed native finalization coordinator and its workspace operations.
import type { TransactionClient } from "../client/transactions";

export interface DemoRunInput {
  companyId: string;
  issueId: string;
  agentId: string;
  startedAt: Date;
}

const STEPS: ReadonlyArray<{ afterSeconds: number; code: string; message: string }> = [
  { afterSeconds: 0, code: "run.started", message: "Run started in the Local sandbox environment" },
  {
    afterSeconds: 2,
    code: "workspace.prepared",
    message: "Workspace acme-main copied into the sandbox",
  },
  { afterSeconds: 31, code: "agent.finished", message: "Builder finished its turn" },
  { afterSeconds: 32, code: "result.accepted", message: "Result accepted" },
  {
    afterSeconds: 35,
    code: "copyback.committed",
    message: "Changes copied back to acme-main (1 file changed)",
  },
  { afterSeconds: 36, code: "run.finished", message: "Run succeeded" },
];

export async function createDemoRun(tx: TransactionClient, input: DemoRunInput): Promise<string> {
  const at = (seconds: number) => new Date(input.startedAt.getTime() + seconds * 1000);
  const finishedAt = at(36);
  const run = await tx.heartbeatRun.create({
    data: {
      companyId: input.companyId,
      agentId: input.agentId,
      nativeIssueId: input.issueId,
      runtimeMode: "native",
      status: "succeeded",
      nativePhase: "committed",
      resultJson: { finalizationPhase: "committed" },
      wakeReason: "issue_assigned",
      createdAt: at(-5),
      startedAt: input.startedAt,
      finishedAt,
    },
  });
  await tx.runEvent.createMany({
    data: STEPS.map((step) => ({
      companyId: input.companyId,
      runId: run.id,
      level: "info" as const,
      code: step.code,
      message: step.message,
      createdAt: at(step.afterSeconds),
    })),
  });
  await tx.nativeRunFinalization.create({
    data: {
      companyId: input.companyId,
      runId: run.id,
      issueId: input.issueId,
      phase: "committed",
      attempt: 1,
      committedAt: at(35),
      createdAt: at(31),
      updatedAt: at(35),
    },
  });
  await tx.workspaceOperation.createMany({
    data: [
      { phase: "workspace_prepare" as const, startedAt: at(1), finishedAt: at(2) },
      { phase: "workspace_finalize" as const, startedAt: at(33), finishedAt: at(35) },
    ].map((operation) => ({
      ...operation,
      companyId: input.companyId,
      runId: run.id,
      issueId: input.issueId,
      status: "succeeded" as const,
    })),
  });
  return run.id;
}
