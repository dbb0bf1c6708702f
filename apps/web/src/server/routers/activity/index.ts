import { listActivity } from "./list";

export const activityRouter = { list: listActivity };
