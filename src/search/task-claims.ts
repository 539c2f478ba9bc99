// Claims on search tasks that are offered to several search threads at once (segment-searcher.ts): the HTTP
// thread writes a task's ticket into a slot of shared memory and sends the task to every thread; the first
// thread to swap the ticket for its negation runs it and the others skip it. So a task waits for the first
// free thread rather than for one thread chosen when it was sent.

export interface Claim {
  slot: number;
  ticket: number;
}

/**
 * Slots, reused in turn. A task whose slot a later one has taken before any thread came to it is skipped by
 * all of them, and its sender offers it again with a new claim.
 */
const SLOTS = 65536;

export class TaskClaims {
  readonly slots = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private ticket = 0;

  /** A claim for a new task (tickets are positive and wrap below 2^30). */
  next(): Claim {
    this.ticket = (this.ticket % 0x3fffffff) + 1;
    const claim = { slot: this.ticket % SLOTS, ticket: this.ticket };
    Atomics.store(this.slots, claim.slot, claim.ticket);
    return claim;
  }
}

/** Called by a search thread: whether it takes the task (true for exactly one of the threads that try). */
export function takeClaim(slots: Int32Array<ArrayBufferLike>, { slot, ticket }: Claim): boolean {
  return Atomics.compareExchange(slots, slot, ticket, -ticket) === ticket;
}
