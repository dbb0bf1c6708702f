import Link from "next/link";

export default function NotFound() {
  return (
    <main
      id="main"
      className="mx-auto flex min-h-screen max-w-lg flex-col justify-center px-6 py-16"
    >
      <p className="text-sm font-semibold text-indigo-700">404</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight">This page does not exist</h1>
      <p className="mt-3 text-slate-600">
        It may have been moved, or it belongs to a company you cannot see.
      </p>
      <p className="mt-6">
        <Link href="/" className="btn btn-primary">
          Back to the console
        </Link>
      </p>
    </main>
  );
}
