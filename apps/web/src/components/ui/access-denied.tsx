/** Shown instead of a page the principal may not open (a FORBIDDEN answer, never a stack trace). */
export function AccessDenied({ title, message }: { title: string; message: string }) {
  return (
    <section className="card px-6 py-10 text-center" aria-labelledby="access-denied-title">
      <h1 id="access-denied-title" className="text-lg font-semibold text-slate-900">
        {title}
      </h1>
      <p className="mt-2 text-sm text-slate-600">{message}</p>
      <p className="mt-1 text-sm text-slate-500">
        Ask an owner or admin of this company if you need access.
      </p>
    </section>
  );
}
