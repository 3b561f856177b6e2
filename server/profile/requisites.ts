import { z } from 'zod';

/**
 * The fields of a buyer's requisite set, in Russian formats. Messages say what is expected and never
 * repeat the value (they reach the client as field errors and may reach logs).
 */
const digitsOnly = (v: unknown) => (typeof v === 'string' ? v.replace(/[\s-]/g, '') : v);

/** ИНН физического лица: 12 digits, the 11th and 12th are check digits. */
export function isPersonalInn(inn: string): boolean {
  if (!/^\d{12}$/.test(inn)) return false;
  const d = [...inn].map(Number);
  const check = (weights: number[]) => (weights.reduce((sum, w, i) => sum + w * d[i]!, 0) % 11) % 10;
  return check([7, 2, 4, 10, 3, 5, 9, 4, 6, 8]) === d[10] && check([3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8]) === d[11];
}

/** +7 and ten digits; "8 (916) 123-45-67", "+7 916 123 45 67" are read as +79161234567. */
function normalizePhone(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const digits = v.replace(/[\s()-]/g, '');
  if (/^8\d{10}$/.test(digits)) return `+7${digits.slice(1)}`;
  if (/^7\d{10}$/.test(digits)) return `+${digits}`;
  return digits;
}

const isoDate = z.iso.date('issue date: a date YYYY-MM-DD');

export const requisiteFieldsInput = z.strictObject({
  fullName: z
    .string()
    .trim()
    .min(3, 'full name: at least 3 characters')
    .max(200, 'full name: at most 200 characters')
    .regex(/^[A-Za-zА-Яа-яЁё][A-Za-zА-Яа-яЁё .'-]*$/u, 'full name: letters, spaces, hyphens and apostrophes only'),
  passportSeries: z.preprocess(digitsOnly, z.string().regex(/^\d{4}$/, 'passport series: 4 digits')),
  passportNumber: z.preprocess(digitsOnly, z.string().regex(/^\d{6}$/, 'passport number: 6 digits')),
  passportIssuedAt: isoDate
    .refine((v) => v >= '1997-10-01', 'issue date: Russian passports of this form are issued since 1997-10-01')
    .refine((v) => v <= new Date().toISOString().slice(0, 10), 'issue date: cannot be in the future'),
  passportIssuedBy: z.string().trim().min(5, 'issued by: at least 5 characters').max(300, 'issued by: at most 300 characters'),
  registrationAddress: z.string().trim().min(10, 'registration address: at least 10 characters').max(500, 'registration address: at most 500 characters'),
  phone: z.preprocess(normalizePhone, z.string().regex(/^\+7\d{10}$/, 'phone: +7 and 10 digits')),
  email: z.email('e-mail: an address like name@example.ru').max(254, 'e-mail: at most 254 characters'),
  inn: z.preprocess(digitsOnly, z.string().refine(isPersonalInn, 'INN: 12 digits of a person\'s tax id with valid check digits')),
});

export type RequisiteFields = z.infer<typeof requisiteFieldsInput>;
export const REQUISITE_FIELD_NAMES = Object.keys(requisiteFieldsInput.shape) as Array<keyof RequisiteFields>;

/** What a list shows: enough to pick the right set, nothing that identifies the person by itself. */
export interface MaskedRequisites {
  /** "Иванов И. П." */
  name: string;
  /** "•••• 1234": the last 4 digits of the passport number */
  passport: string;
  /** "+7 ••• •••-••-67" */
  phone: string;
  /** "i•••@example.ru" */
  email: string;
}

export function maskRequisites(f: RequisiteFields): MaskedRequisites {
  const [last = '', ...rest] = f.fullName.split(/\s+/);
  const initials = rest.map((p) => `${p[0]!.toUpperCase()}.`).join(' ');
  const [local = '', domain = ''] = f.email.split('@');
  return {
    name: `${last[0]?.toUpperCase() ?? ''}${'•'.repeat(Math.max(0, Math.min(last.length - 1, 5)))}${initials ? ` ${initials}` : ''}`,
    passport: `•••• ${f.passportNumber.slice(-4)}`,
    phone: `+7 ••• •••-••-${f.phone.slice(-2)}`,
    email: `${local[0] ?? ''}•••@${domain}`,
  };
}
