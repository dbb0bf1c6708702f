import { listMembers } from "./list";
import { setMemberStatus } from "./set-status";
import { updateMemberRole } from "./update-role";

export const membersRouter = {
  list: listMembers,
  updateRole: updateMemberRole,
  setStatus: setMemberStatus,
};
