import { attestRecoveryOwnerStop } from "./attest-owner-stop";
import { getRecoveryForIssue } from "./for-issue";
import { listOpenRecovery } from "./list-open";
import { resolveRecovery } from "./resolve";

export const recoveryRouter = {
  forIssue: getRecoveryForIssue,
  listOpen: listOpenRecovery,
  attestOwnerStop: attestRecoveryOwnerStop,
  resolve: resolveRecovery,
};
