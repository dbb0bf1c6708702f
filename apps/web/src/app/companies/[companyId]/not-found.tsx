import Link from "next/link";

/** Inside a company: an issue or run that does not exist here (or belongs to another company). */
export default function CompanyNotFound() {
  return (
    <section className="card px-6 py-10 text-center" aria-labelledby="not-found-title">
      <h1 id="not-found-title" className="text-lg font-semibold">
        Not found
      </h1>
      <p className="mt-2 text-sm text-slate-600">
        There is nothing here, or it belongs to a company you cannot see.
      </p>
      <p className="mt-4">
        <Link href="/" className="text-sm font-medium text-indigo-700 hover:underline">
          Back to the console
        </Link>
      </p>
    </section>
  );
}
