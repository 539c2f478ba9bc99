// Dashboard tokens: HS256 JWTs whose subject is the account id, valid for 24 hours.
import { SignJWT, jwtVerify } from "jose";

export const JWT_LIFETIME_SECONDS = 24 * 60 * 60;

export class JwtIssuer {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  sign(accountId: string, now: Date): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(accountId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
      .sign(this.key);
  }

  /** The account id of a valid token, or null for anything else (bad signature, expired, malformed). */
  async verify(token: string, now: Date): Promise<string | null> {
    try {
      // Tokens this server signs always carry iat and exp 24 h apart: one without them, or meant to last
      // longer, was not made here (it can only come from a leaked secret) and is refused.
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ["HS256"],
        currentDate: now,
        requiredClaims: ["sub", "iat", "exp"],
        maxTokenAge: JWT_LIFETIME_SECONDS,
      });
      if (payload.exp! - payload.iat! > JWT_LIFETIME_SECONDS) return null;
      return typeof payload.sub === "string" ? payload.sub : null;
    } catch {
      return null;
    }
  }
}
