import { listIssues } from "./list";

export const issuesRouter = { list: listIssues };
