/**
 * What the server holds open, released in reverse order of acquisition: whatever was
 * acquired later may use what was acquired before (the engine the store, the HTTP front
 * the engine), so it goes first. Every release runs even when one before it fails; the
 * failures are thrown together at the end.
 */
export class Resources {
  private readonly releases: Array<() => unknown> = [];

  /** Registers how to release what was just acquired. */
  defer(release: () => unknown): void {
    this.releases.push(release);
  }

  /** Releases everything, last acquired first; throws the failure, or an AggregateError of several. */
  async closeAll(): Promise<void> {
    const failures: unknown[] = [];
    for (let release = this.releases.pop(); release; release = this.releases.pop()) {
      try {
        await release();
      } catch (e) {
        failures.push(e);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} resources failed to close`);
  }
}
