interface Waiter<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (e: unknown) => void;
}

/**
 * SQLSTATE classes of errors that one item of a batch can cause on its own (bad data,
 * a constraint, a limit): the batch is then run again item by item, so only that item
 * fails. Any other error (a lost connection, a timeout, the database shutting down) says
 * nothing about the items and fails the whole batch: running them again could store a
 * batch whose commit succeeded but whose answer was lost, twice.
 */
const ITEM_ERRORS = ['22', '23', '54'];

function itemError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && ITEM_ERRORS.includes(code.slice(0, 2));
}

/**
 * Group commit for PostgreSQL: the writes that arrive in one event-loop turn (and while
 * `maxInFlight` batches are already on their way) go to the database as one statement,
 * so one parse, one plan, one commit and one WAL flush serve all of them. Each caller's
 * promise settles only with the statement, after its commit: an answer never
 * acknowledges an uncommitted write. With the database idle a write goes out on the
 * next turn, so a lone request waits for no one.
 */
export class GroupCommit<I, O> {
  private pending: Waiter<I, O>[] = [];
  private running = 0;
  private scheduled = false;

  /**
   * @param run writes the items in one statement and returns one output per item, in order.
   * @param maxInFlight batches under way at once; the rest waits and joins the next batch.
   * @param maxItems items per batch at most (a statement's parameters stay bounded).
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxInFlight = 2,
    private readonly maxItems = 256,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    // setImmediate, not a microtask: the requests parsed in the same I/O phase join in.
    setImmediate(() => {
      this.scheduled = false;
      if (this.running >= this.maxInFlight || this.pending.length === 0) return;
      const batch = this.pending.splice(0, this.maxItems);
      this.running++;
      void this.execute(batch).finally(() => {
        this.running--;
        this.schedule();
      });
      this.schedule();
    });
  }

  private async execute(batch: Waiter<I, O>[]): Promise<void> {
    try {
      const out = await this.run(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(out[i]!);
    } catch (e) {
      if (batch.length === 1 || !itemError(e)) {
        for (const w of batch) w.reject(e);
        return;
      }
      await Promise.all(
        batch.map(async (w) => {
          try {
            w.resolve((await this.run([w.item]))[0]!);
          } catch (err) {
            w.reject(err);
          }
        }),
      );
    }
  }
}
