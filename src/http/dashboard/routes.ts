// The built-in dashboard, outside /api: GET / redirects to /dashboard, which serves one HTML page plus
// its stylesheet and script, all embedded in the executable. The page itself needs no credential; it
// signs in through the public API and sends the JWT with every call.
import { Elysia } from "elysia";
import { DASHBOARD_PAGE } from "./page.ts";
import styles from "./styles.css" with { type: "text" };
import script from "./app.client.js" with { type: "text" };

export const DASHBOARD_PATH = "/dashboard";

// Everything the page loads comes from this origin; the API is called with fetch on the same origin.
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function asset(body: string, contentType: string, extra: Record<string, string> = {}) {
  return () =>
    new Response(body, {
      headers: {
        "content-type": contentType,
        // Revalidate on every load so a new binary never runs with an old script.
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        ...extra,
      },
    });
}

const hidden = { detail: { hide: true } };

export const dashboardRoutes = new Elysia({ name: "quarry-dashboard" })
  .get("/", () => new Response(null, { status: 302, headers: { location: DASHBOARD_PATH } }), hidden)
  .get(
    DASHBOARD_PATH,
    asset(DASHBOARD_PAGE, "text/html; charset=utf-8", {
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "referrer-policy": "no-referrer",
    }),
    hidden,
  )
  .get(`${DASHBOARD_PATH}/styles.css`, asset(styles, "text/css; charset=utf-8"), hidden)
  .get(`${DASHBOARD_PATH}/app.js`, asset(script, "text/javascript; charset=utf-8"), hidden);
