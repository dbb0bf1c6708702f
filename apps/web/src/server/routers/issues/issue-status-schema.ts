import { z } from "zod";
import { ISSUE_STATUSES } from "./issue-status";

export const issueStatusSchema = z.enum(ISSUE_STATUSES);
