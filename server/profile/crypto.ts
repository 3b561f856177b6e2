import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ProfileKeyEnv } from './env';
import { profileError } from './errors';

/**
 * Requisite sets at rest: AES-256-GCM (Node's own crypto), a fresh 12-byte IV per version, the 16-byte
 * tag, and the set id + version as additional authenticated data (a ciphertext copied to another row
 * does not decrypt). The stored text is `v1.<iv>.<tag>.<ciphertext>` (base64url) beside the key id,
 * so a key can be rotated: new versions are written with the current key, old ones read with a retired
 * key from PROFILE_DATA_OLD_KEYS until they are re-written.
 */
export interface Keyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** Public, in the repository: only ever used outside production (parseEnv refuses production without a key). */
const DEV_KEY = Buffer.from('pin-booking-dev-only-profile-key'.padEnd(32, '!').slice(0, 32), 'utf8');

export function keyringFromEnv(env: ProfileKeyEnv): Keyring {
  const keys = new Map<string, Buffer>();
  for (const entry of env.PROFILE_DATA_OLD_KEYS.split(',').filter(Boolean)) {
    const [id, key] = entry.split(':') as [string, string];
    keys.set(id, decodeKey(key));
  }
  if (env.PROFILE_DATA_KEY) keys.set(env.PROFILE_DATA_KEY_ID, decodeKey(env.PROFILE_DATA_KEY));
  else if (env.NODE_ENV === 'production') throw new Error('PROFILE_DATA_KEY is required in production');
  else keys.set(env.PROFILE_DATA_KEY_ID, DEV_KEY);
  return { currentId: env.PROFILE_DATA_KEY_ID, keys };
}

function decodeKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('a profile data key must be 32 bytes');
  return key;
}

const aad = (setId: string, version: number) => Buffer.from(`profile.requisite_set:${setId}:${version}`, 'utf8');

export function encryptFields(keyring: Keyring, setId: string, version: number, clear: unknown): { ciphertext: string; keyId: string } {
  const key = keyring.keys.get(keyring.currentId)!;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(setId, version));
  const body = Buffer.concat([cipher.update(JSON.stringify(clear), 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return { ciphertext: ['v1', iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join('.'), keyId: keyring.currentId };
}

export function decryptFields(keyring: Keyring, setId: string, version: number, stored: { ciphertext: string; keyId: string }): unknown {
  const key = keyring.keys.get(stored.keyId);
  // the message names the key id only: never the ciphertext, never a field
  if (!key) throw profileError('PROFILE_KEY_UNAVAILABLE', `The key ${stored.keyId} of this requisite set is not configured`, { keyId: stored.keyId });
  const [format, iv, tag, body] = stored.ciphertext.split('.');
  if (format !== 'v1' || !iv || !tag || body === undefined) throw profileError('PROFILE_CIPHERTEXT_INVALID', 'The stored requisite set cannot be read');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(aad(setId, version));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const clear = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    return JSON.parse(clear) as unknown;
  } catch {
    throw profileError('PROFILE_CIPHERTEXT_INVALID', 'The stored requisite set cannot be read');
  }
}
