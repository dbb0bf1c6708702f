import { attestRecoveryOwnerStop } from "./attest-owner-stop";
import { getRecoveryForIssue } from "./for-issue";
import { listOpenRecovery } from "./list-open";
import { getReconstructionOffer, reconstructRecoveryWorkspace } from "./reconstruction";
import { retryRecoveryWorkspaceExport } from "./retry-workspace-export";
import { resolveRecovery } from "./resolve";

export const recoveryRouter = {
  forIssue: getRecoveryForIssue,
  listOpen: listOpenRecovery,
  attestOwnerStop: attestRecoveryOwnerStop,
  retryWorkspaceExport: retryRecoveryWorkspaceExport,
  resolve: resolveRecovery,
  reconstructionOffer: getReconstructionOffer,
  reconstructWorkspace: reconstructRecoveryWorkspace,
};
