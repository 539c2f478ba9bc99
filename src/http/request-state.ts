// Per-request facts gathered along the way (id, timing, who called, which knowledge base, summaries),
// read at the end by the request log. Keyed by the Request object so every hook and handler can reach it.
import type { Principal } from "../accounts/service.ts";
import type { QuarryError } from "../errors.ts";
import { newId } from "../store/ids.ts";

export interface RequestState {
  id: string;
  startedAt: number;
  principal: Principal | null;
  kbId: string | null;
  requestSummary: Record<string, unknown>;
  responseSummary: Record<string, unknown>;
  /** Why the body could not be read (thrown before validation; see body.ts). */
  bodyError?: QuarryError;
  /** A multipart body's form as sent: Elysia turns the JSON text of its fields into values (body.ts). */
  form?: FormData;
}

const states = new WeakMap<Request, RequestState>();

export function startRequest(request: Request): RequestState {
  const state: RequestState = {
    id: newId("req"),
    startedAt: performance.now(),
    principal: null,
    kbId: null,
    requestSummary: {},
    responseSummary: {},
  };
  states.set(request, state);
  return state;
}

export function requestState(request: Request): RequestState {
  return states.get(request) ?? startRequest(request);
}
