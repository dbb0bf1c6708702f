import { getCompany } from "./get";
import { listCompanies } from "./list";

export const companiesRouter = { list: listCompanies, get: getCompany };
