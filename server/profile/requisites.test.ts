import { describe, expect, it } from 'vitest';
import { parseEnv } from '../main/env';
import { decryptFields, encryptFields, keyringFromEnv } from './crypto';
import { isPersonalInn, maskRequisites, requisiteFieldsInput } from './requisites';
import { uniqueRequisites, validInn } from '../../test/fixtures/profile.fixtures';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };
const SET = '00000000-0000-4000-8000-000000000c01';

describe('requisite fields (Russian formats)', () => {
  it('accepts a valid set and normalizes phone, passport and INN spacing', () => {
    const f = uniqueRequisites();
    const parsed = requisiteFieldsInput.parse({
      ...f, phone: `8 (${f.phone.slice(2, 5)}) ${f.phone.slice(5, 8)}-${f.phone.slice(8, 10)}-${f.phone.slice(10)}`,
      passportSeries: `${f.passportSeries.slice(0, 2)} ${f.passportSeries.slice(2)}`,
    });
    expect(parsed).toEqual(f);
  });

  it('INN: 12 digits with both check digits (a known valid one, and every single-digit change of it refused)', () => {
    expect(isPersonalInn('500100732259')).toBe(true);
    for (let i = 0; i < 12; i++) {
      const changed = '500100732259'.split('');
      changed[i] = String((Number(changed[i]) + 1) % 10);
      expect(isPersonalInn(changed.join('')), changed.join('')).toBe(false);
    }
    expect(isPersonalInn('7707083893')).toBe(false); // a company's 10-digit INN
    for (let i = 0; i < 50; i++) expect(isPersonalInn(validInn())).toBe(true);
  });

  it.each([
    ['passportSeries', '123', 'passport series: 4 digits'],
    ['passportNumber', '12345a', 'passport number: 6 digits'],
    ['passportIssuedAt', '1990-01-01', 'since 1997-10-01'],
    ['passportIssuedAt', '2999-01-01', 'cannot be in the future'],
    ['passportIssuedAt', '01.02.2015', 'YYYY-MM-DD'],
    ['phone', '+1 202 555 0100', 'phone: +7 and 10 digits'],
    ['email', 'not-an-email', 'e-mail'],
    ['inn', '500100732258', 'INN'],
    ['fullName', 'Иванов 1', 'full name: letters'],
  ])('%s=%s is refused with a message that says what is expected and does not repeat the value', (field, value, message) => {
    const r = requisiteFieldsInput.safeParse({ ...uniqueRequisites(), [field]: value });
    expect(r.success).toBe(false);
    const issue = r.error!.issues.find((i) => i.path[0] === field)!;
    expect(issue.message).toContain(message);
    expect(JSON.stringify(r.error!.issues.map((i) => i.message))).not.toContain(value);
  });

  it('masks: surname initial, initials, the last 4 of the passport number; no field appears whole', () => {
    const f = { ...uniqueRequisites(), fullName: 'Иванов Иван Петрович', passportNumber: '654321' };
    const m = maskRequisites(f);
    expect(m.name).toBe('И••••• И. П.');
    expect(m.passport).toBe('•••• 4321');
    expect(m.phone.endsWith(f.phone.slice(-2))).toBe(true);
    const text = JSON.stringify(m);
    for (const [k, v] of Object.entries(f)) if (k !== 'passportIssuedAt') expect(text, k).not.toContain(v);
  });
});

describe('encryption at rest (AES-256-GCM)', () => {
  const env = parseEnv(base);
  it('round-trips; the ciphertext contains no field; a copied ciphertext does not open under another id/version', () => {
    const keyring = keyringFromEnv(env);
    const f = uniqueRequisites();
    const sealed = encryptFields(keyring, SET, 1, f);
    for (const v of Object.values(f)) expect(sealed.ciphertext).not.toContain(v);
    expect(decryptFields(keyring, SET, 1, sealed)).toEqual(f);
    expect(() => decryptFields(keyring, SET, 2, sealed)).toThrow(expect.objectContaining({ code: 'PROFILE_CIPHERTEXT_INVALID' }));
    expect(() => decryptFields(keyring, '00000000-0000-4000-8000-000000000c02', 1, sealed)).toThrow(expect.objectContaining({ code: 'PROFILE_CIPHERTEXT_INVALID' }));
    // two encryptions of the same set differ (fresh IV)
    expect(encryptFields(keyring, SET, 1, f).ciphertext).not.toBe(sealed.ciphertext);
  });

  it('rotation: a version written under an old key id is read with PROFILE_DATA_OLD_KEYS; without it, a typed error naming the key id only', () => {
    const k0 = Buffer.alloc(32, 1).toString('base64');
    const k1 = Buffer.alloc(32, 2).toString('base64');
    const old = keyringFromEnv(parseEnv({ ...base, PROFILE_DATA_KEY: k0, PROFILE_DATA_KEY_ID: 'k0' }));
    const sealed = encryptFields(old, SET, 1, { a: 1 });
    expect(sealed.keyId).toBe('k0');
    const rotated = keyringFromEnv(parseEnv({ ...base, PROFILE_DATA_KEY: k1, PROFILE_DATA_KEY_ID: 'k1', PROFILE_DATA_OLD_KEYS: `k0:${k0}` }));
    expect(decryptFields(rotated, SET, 1, sealed)).toEqual({ a: 1 });
    expect(encryptFields(rotated, SET, 2, { a: 1 }).keyId).toBe('k1');
    const forgot = keyringFromEnv(parseEnv({ ...base, PROFILE_DATA_KEY: k1, PROFILE_DATA_KEY_ID: 'k1' }));
    expect(() => decryptFields(forgot, SET, 1, sealed)).toThrow(expect.objectContaining({ code: 'PROFILE_KEY_UNAVAILABLE' }));
  });
});
