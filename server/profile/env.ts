import { z } from 'zod';
import type { PlatformEnv } from '../platform/env';

/** profile's settings: the keys of the buyers' requisite sets at rest. */
export const profileEnvShape = {
  // the key of the buyers' requisite sets at rest (AES-256-GCM, server/profile/crypto.ts).
  // PROFILE_DATA_KEY: base64 of 32 bytes, the key new versions are written with, under PROFILE_DATA_KEY_ID;
  // PROFILE_DATA_OLD_KEYS: "id:base64,id:base64" — retired keys older versions may still be read with.
  // Unset outside production: a fixed dev/test key (so `npm start` and tests need no setup); production requires it.
  PROFILE_DATA_KEY: z.string().regex(/^([A-Za-z0-9+/]{43}=)?$/, 'base64 of 32 bytes').default(''),
  PROFILE_DATA_KEY_ID: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, '1-32 letters, digits, _ -').default('k1'),
  PROFILE_DATA_OLD_KEYS: z
    .string()
    .regex(/^([A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)?(,[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)*$/, 'comma-separated id:base64-of-32-bytes list')
    .default(''),
};

export type ProfileEnv = z.infer<z.ZodObject<typeof profileEnvShape>>;

/**
 * What profile's settings cannot say field by field: production needs a key of its own, because the dev
 * key is public (it is in the repository) and personal data is never stored with it. Null when all is well.
 */
export function profileEnvProblem(env: Pick<PlatformEnv, 'NODE_ENV'> & Pick<ProfileEnv, 'PROFILE_DATA_KEY'>): string | null {
  return env.NODE_ENV === 'production' && !env.PROFILE_DATA_KEY ? 'PROFILE_DATA_KEY is required in production (base64 of 32 bytes)' : null;
}

/** What the keyring is built from: profile's slice and whether this is production (the dev key is refused there). */
export type ProfileKeyEnv = Pick<PlatformEnv, 'NODE_ENV'> & ProfileEnv;
