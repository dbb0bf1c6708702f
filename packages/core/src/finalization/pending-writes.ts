/**
 * Database writes started and not awaited at once (run events written while the copyback goes
 * on): `join` awaits them all and throws the first failure; `settle` awaits them and ignores
 * failures (a path that already fails for another reason). No write is left unawaited.
 */
export class PendingWrites {
  private readonly writes: Promise<void>[] = [];

  add(write: Promise<void>): void {
    // Observed at once, so a failure that nobody joined yet is never an unhandled rejection.
    write.catch(() => undefined);
    this.writes.push(write);
  }

  async join(): Promise<void> {
    await Promise.all(this.writes);
  }

  async settle(): Promise<void> {
    await Promise.allSettled(this.writes);
  }
}
