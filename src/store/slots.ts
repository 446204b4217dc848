// A counting semaphore (the page slots every batch shares, the pages a collection holds).

/** A counting semaphore, FIFO. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  /** Serialises the takers of every slot, so two of them never each hold part of the slots. */
  private gate: Promise<void> = Promise.resolve();
  constructor(private readonly n: number) {
    this.free = n;
  }

  /** Runs fn holding every slot: after the holders before it, and with none taken until it ends. */
  async runAlone<T>(fn: () => Promise<T>): Promise<T> {
    let open!: () => void;
    const gate = this.gate;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    const releases: (() => void)[] = [];
    try {
      await gate;
      for (let i = 0; i < this.n; i++) releases.push(await this.acquire());
      return await fn();
    } finally {
      for (const release of releases) release();
      open();
    }
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Waits for a slot; the function returned frees it (once, however often it is called). */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
