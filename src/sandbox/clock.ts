// The sandbox clock: starts at a given instant and advances with real time, or stays where it is set.

export class SandboxClock {
  private base: number;
  private realBase: number;

  constructor(
    start: number,
    private readonly advance: boolean,
    private readonly realNow: () => number = () => performance.now(),
  ) {
    this.base = start;
    this.realBase = realNow();
  }

  now(): number {
    return this.advance ? this.base + Math.floor(this.realNow() - this.realBase) : this.base;
  }

  set(ms: number): void {
    this.base = ms;
    this.realBase = this.realNow();
  }
}
