// The floors of packages/core/src, bottom first (packages/core/README.md says what each holds).
// A folder may import its own floor's earlier folders and every floor below; never one above.
// eslint.config.mjs turns this list into eslint-plugin-boundaries' element types and policies,
// so a back-arrow fails the static tier of `npm test`. The files at the root of src are the
// kernel's too (errors.ts, database-failure.ts: they import nothing of core) and the package's
// root entry (index.ts).
export const CORE_FLOORS = [
  // The kernel: typed errors, process identity, metrics definitions, small pure helpers, and the
  // controller platforms (identity, the harness's signed stop receipt and its verifier).
  ["memory", "auth", "process", "metrics", "deployment", "platforms"],
  // The copyback engine: archives, manifests, deltas, merge, directory-merge locks (no database).
  ["copyback"],
  // Records: each table's or JSON document's schema, reader and writer.
  ["records"],
  // The board's own rules (membership changes, task status updates), stored attachments, providers
  // and their leases, the host workspace's preparation, the operator's retained sandboxes.
  ["board", "attachments", "providers", "leases", "workspace", "sandboxes"],
  ["runs"],
  ["finalization"],
  ["recovery"],
  ["dispatch"],
  // The shells: the metrics endpoint, the CLI and the package's curated entry points (entries/:
  // what outside packages import, named; nothing inside core imports them).
  ["monitoring", "cli", "entries"],
];
