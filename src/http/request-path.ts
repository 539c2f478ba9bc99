// The path of a request, as `new URL(…).pathname` gives it. Bun gives a request without a usable Host header
// (HTTP/1.0 may send none, and an empty one is no better) a URL that is its path alone, and one with a Host it
// cannot parse (x:99999, [) a URL that `new URL` refuses: that threw in the first hook and again in the error
// handler (a 500 and a stack trace a request). Elysia's own `path` is no substitute: it starts looking for the
// path at the URL's 12th character, so behind a host of 3 characters or fewer (Host: q) it cut the path short.
const BASE = "http://localhost";

/** Each request's path, worked out once: the gate, the body hooks, the route, the error handler and the log all ask. */
const paths = new WeakMap<Request, string>();

export function requestPath(request: Request): string {
  let path = paths.get(request);
  if (path === undefined) paths.set(request, (path = pathOf(request.url)));
  return path;
}

function pathOf(url: string): string {
  try {
    return new URL(url, BASE).pathname;
  } catch {
    const scheme = url.indexOf("://");
    const start = scheme < 0 ? 0 : url.indexOf("/", scheme + 3);
    // One leading slash: against a base, "//api/…" would be read as a host named api.
    return start < 0 ? "/" : new URL(url.slice(start).replace(/^\/+/, "/"), BASE).pathname;
  }
}
