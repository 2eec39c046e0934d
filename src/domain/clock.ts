// Protocol time goes through a Clock so that tests move time instead of sleeping.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Seconds since the epoch, as JWT NumericDate. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000)
}

/** A clock tests can move. */
export function createManualClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(seconds: number): void; set(ms: number): void } {
  let t = start
  return {
    now: () => t,
    advance(seconds: number) {
      t += seconds * 1000
    },
    set(ms: number) {
      t = ms
    },
  }
}
