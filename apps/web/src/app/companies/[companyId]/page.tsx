import { redirect } from "next/navigation";
import { companyPath } from "~/components/nav/paths";

export default async function CompanyHome({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  redirect(companyPath(companyId, "issues"));
}
