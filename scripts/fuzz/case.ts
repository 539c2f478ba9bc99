// What a generated case is: one HTTP request built against the run's live ids, and what the server may answer.

/** Who sends the request. */
export type Credential =
  | { kind: "api-key" } // the attacker's API key
  | { kind: "jwt" } // the attacker's dashboard JWT
  | { kind: "none" }
  | { kind: "raw"; value: string }; // an Authorization header value sent as is

/** Ids of the run, filled in when a case is sent. */
export interface LiveIds {
  kbId: string;
  docId: string;
  /** A knowledge base and document of the unrelated tenant: the attacker must get 404 for them. */
  otherKbId: string;
  otherDocId: string;
}

export interface FuzzRequest {
  method: string;
  /** Path under the server root, e.g. /api/v1/knowledge-bases (sent byte for byte, no re-encoding). */
  path: string;
  /** Written verbatim and in order (pairs allow a header twice); Host and Content-Length are added unless given. */
  headers?: Record<string, string> | [string, string][];
  /** Bytes, or text sent as UTF-8. */
  body?: Uint8Array | string;
  credential: Credential;
}

/**
 * reject: the input is invalid per the spec, the answer must be a 4xx envelope;
 * any: valid or debatable input, any non-5xx answer is fine (a 4xx must still carry the envelope).
 */
export type Expectation = "reject" | "any";

export interface FuzzCase {
  id: number;
  category: string;
  name: string;
  expect: Expectation;
  build(ids: LiveIds): FuzzRequest;
  /** A 202 answer created a document that must then end ready or failed. */
  createsDocument?: boolean;
}

export type CaseSpec = Omit<FuzzCase, "id" | "category">;
