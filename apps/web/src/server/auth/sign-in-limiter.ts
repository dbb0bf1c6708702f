// A second sign-in throttle beside better-auth's own per-IP limiter: attempts per (client IP,
// email) and per email across all IPs. Without a proxy in front, the client IP comes from an
// X-Forwarded-For header the client itself may set, so the per-email bucket is what bounds a
// password-guessing run against one account whatever IPs it claims (at the cost of locking that
// account out of sign-in for at most one window).

export interface SignInLimits {
  /** Attempts allowed per client IP and email within `windowMs`. */
  perIpAndEmail: number;
  /** Attempts allowed per email, whatever the IP, within `windowMs`. */
  perEmail: number;
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perIpAndEmail: 5, perEmail: 10, windowMs: 60_000 };

interface Bucket {
  count: number;
  windowStart: number;
}

/** The most buckets kept; past that, expired ones are swept and then the oldest dropped. */
const MAX_BUCKETS = 50_000;

export class SignInLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records one attempt and says whether it may proceed; when refused, how many seconds until it
   * may. A refused attempt does not extend the window (a waiting user gets in after it).
   */
  attempt(ip: string, email: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const address = email.trim().toLowerCase();
    const keys: Array<[string, number]> = [
      [`ip+email:${ip}|${address}`, this.limits.perIpAndEmail],
      [`email:${address}`, this.limits.perEmail],
    ];
    const now = this.now();
    let retryAfterMs = 0;
    for (const [key, max] of keys) {
      const bucket = this.current(key, now);
      if (bucket && bucket.count >= max) retryAfterMs = Math.max(retryAfterMs, bucket.windowStart + this.limits.windowMs - now);
    }
    if (retryAfterMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
    for (const [key] of keys) {
      const bucket = this.current(key, now);
      if (bucket) bucket.count += 1;
      else this.buckets.set(key, { count: 1, windowStart: now });
    }
    if (this.buckets.size > MAX_BUCKETS) this.sweep(now);
    return { allowed: true };
  }

  private current(key: string, now: number): Bucket | undefined {
    const bucket = this.buckets.get(key);
    if (bucket && now - bucket.windowStart >= this.limits.windowMs) {
      this.buckets.delete(key);
      return undefined;
    }
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) if (now - bucket.windowStart >= this.limits.windowMs) this.buckets.delete(key);
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= MAX_BUCKETS) break;
      this.buckets.delete(key);
    }
  }
}

/** The client address as the web server saw it: the first X-Forwarded-For entry, or "unknown". */
export function clientIpOf(headers: Headers): string {
  const forwarded = headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return forwarded || headers.get("x-real-ip")?.trim() || "unknown";
}
