// The CLI's exit statuses: one table, printed in `--help` and in the README, used everywhere.

export const EXIT = {
  /** The command did what was asked: archive safe, merge applied or unchanged, doctor healthy. */
  ok: 0,
  /** The command ran and the answer is no: archive rejected, merge conflict, a write failed, an attestation refused. */
  failed: 1,
  /** The command line or an input file is wrong: unknown option, missing file, bad baseline. */
  usage: 2,
  /** The environment is in the way: lock timeout, lock root refused, untrusted filesystem, no database. */
  environment: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODE_TABLE = [
  "Exit status:",
  "  0  ok: archive safe, merge applied or unchanged, doctor found nothing wrong",
  "  1  failed: archive rejected, merge conflict (nothing written), or a merge/IO failure;",
  "     a recovery action not found, or an attestation refused (its stable code; nothing written)",
  "  2  usage: bad command line, or an input file missing or invalid (baseline, archive, target)",
  "  3  environment: directory-merge lock timeout, lock root or instance root refused,",
  "     instance root on a filesystem whose locking cannot be trusted, database unreachable",
  "     (or the embedded one not running)",
].join("\n");
