// The run a dispatch pass hands to the executor: the shape of runs/claim-runs' ClaimedRun, declared
// structurally here so the dispatcher can be tested with fakes and without the claim's module.
export interface ClaimedRunRef {
  runId: string;
  companyId: string;
  issueId: string;
  agentId: string;
}
