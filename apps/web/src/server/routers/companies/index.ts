import { listCompanies } from "./list";

export const companiesRouter = { list: listCompanies };
