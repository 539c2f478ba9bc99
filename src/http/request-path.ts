// The path of a request. Bun gives a request without a usable Host header (HTTP/1.0 may send none, and an
// empty or malformed one is no better) a URL that is its path alone, which `new URL` refuses: that threw in
// the first hook and again in the error handler, and the client got Bun's HTML error page.
const BASE = "http://localhost";

export function requestPath(request: Request): string {
  return new URL(request.url, BASE).pathname;
}
