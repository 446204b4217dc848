// Injected faults: one draw of a seeded PRNG per accepted /v1 request, so a seed gives the same
// fault sequence every run.

import { prng } from './hash.js';

export type Fault = 'none' | '503' | '423' | '429' | 'drop';

export interface FaultRates {
  rate503?: number;
  rate423?: number;
  rate429?: number;
  rateDrop?: number;
}

/** `faultRate` is split evenly over the four kinds; explicit per-kind rates override it. */
export function resolveFaultRates(faultRate: number | undefined, faults: FaultRates | undefined): Required<FaultRates> {
  const each = (faultRate ?? 0) / 4;
  return {
    rate503: faults?.rate503 ?? each,
    rate423: faults?.rate423 ?? each,
    rate429: faults?.rate429 ?? each,
    rateDrop: faults?.rateDrop ?? each,
  };
}

export class FaultInjector {
  private readonly next: () => number;

  constructor(
    seed: number,
    private readonly rates: Required<FaultRates>,
  ) {
    this.next = prng(seed ^ 0x0fa17);
  }

  draw(): Fault {
    const u = this.next();
    let edge = this.rates.rate503;
    if (u < edge) return '503';
    if (u < (edge += this.rates.rate423)) return '423';
    if (u < (edge += this.rates.rate429)) return '429';
    if (u < edge + this.rates.rateDrop) return 'drop';
    return 'none';
  }
}
