import { z } from 'zod';
import { positiveInt } from '../platform/env';

/** auth's settings: sessions, and what the sign-in and the CSRF check believe of the proxies in front. */
export const authEnvShape = {
  SESSION_SECRET: z.string().min(32, 'at least 32 characters').default('dev-only-session-secret-change-me-in-production!!'),
  SESSION_TTL_HOURS: positiveInt(12),
  /**
   * Reverse proxies in front of the web that append to X-Forwarded-For (nginx $proxy_add_x_forwarded_for).
   * 0 (default, nothing in front): the sign-in limits count the socket's address and X-Forwarded-For is
   * not read at all; n: the entry n places from the right (server/auth/client-ip.ts).
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * 1: the web runs behind a reverse proxy that overwrites X-Forwarded-Host and X-Forwarded-Proto, and the
   * CSRF check (server/auth/same-origin.ts) believes them. 0 (default): they are not read — any client
   * can write them. docs/security.md
   */
  TRUST_PROXY: z.enum(['0', '1'], '0 or 1').default('0'),
  /**
   * The origins the console is served at, comma-separated (`https://console.pin.example`): a mutation's
   * Origin must be one of them, and the request's Host and forwarded headers are then not read at all.
   * Empty (default): the request's own Host is the origin. docs/security.md
   */
  PUBLIC_ORIGIN: z.string().default('').transform((value, ctx) => {
    const origins: string[] = [];
    for (const raw of value.split(',').map((s) => s.trim()).filter(Boolean)) {
      const url = URL.canParse(raw) ? new URL(raw) : null;
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
        ctx.addIssue({ code: 'custom', message: `"${raw}" is not an origin: comma-separated scheme://host[:port], no path` });
        return z.NEVER;
      }
      origins.push(url.origin);
    }
    return origins;
  }),
};

export type AuthEnv = z.infer<z.ZodObject<typeof authEnvShape>>;
