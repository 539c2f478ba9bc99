// Who is calling, for the per-client rate limits: the socket's address, or behind a trusted reverse proxy
// (QUARRY_TRUST_PROXY=on) the address that proxy appended to X-Forwarded-For. A client sending its own
// X-Forwarded-For cannot pick its key unless the proxy is trusted.
import type { Server } from "bun";

/**
 * The rate-limit key for an address. IPv6 clients usually hold a whole /64, so they are keyed by it
 * (an IPv4-mapped address is keyed as the IPv4 address).
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const [head, tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

export function clientAddress(request: Request, server: Server<unknown> | null, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for")?.split(",").pop()?.trim();
    if (forwarded) return forwarded;
  }
  return server?.requestIP(request)?.address ?? "unknown";
}
