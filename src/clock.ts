// The service's notion of "now". Tests inject a movable clock to cross trial and billing-period boundaries.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}
