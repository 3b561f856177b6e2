/**
 * Test fixtures of profile (used by tests only): valid requisite fields with values unique to one call
 * (a no-leak scan looks for each of them) and a set stored the way the command stores it.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Actor } from '../auth/actor';
import type { TestContext } from '../testing/harness';
import { createRequisiteSetCommand } from './commands';
import { keyringOf } from './router';
import type { RequisiteFields } from './requisites';

/** A personal INN with valid check digits from 10 random ones. */
export function validInn(): string {
  const d = Array.from({ length: 10 }, () => randomInt(10));
  const check = (digits: number[], weights: number[]) => (weights.reduce((s, w, i) => s + w * digits[i]!, 0) % 11) % 10;
  d.push(check(d, [7, 2, 4, 10, 3, 5, 9, 4, 6, 8]));
  d.push(check(d, [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8]));
  return d.join('');
}

const LETTERS = 'абвгдежзиклмнопрстуфхцчшэюя';
const word = (n: number) => Array.from({ length: n }, () => LETTERS[randomInt(LETTERS.length)]).join('');
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** Fields no other test produces: a random surname, passport, phone, e-mail, INN, address, authority. */
export function uniqueRequisites(): RequisiteFields {
  const surname = cap(word(9));
  return {
    fullName: `${surname} ${cap(word(6))} ${cap(word(8))}`,
    passportSeries: String(randomInt(1000, 10000)),
    passportNumber: String(randomInt(100000, 1000000)),
    passportIssuedAt: '2015-06-1' + randomInt(10),
    passportIssuedBy: `ГУ МВД ${cap(word(10))} по г. Москве`,
    registrationAddress: `г. Москва, ул. ${cap(word(11))}, д. ${randomInt(1, 200)}, кв. ${randomInt(1, 500)}`,
    phone: `+79${String(randomInt(100000000, 1000000000))}`,
    email: `buyer${randomUUID().slice(0, 8)}@example.ru`,
    inn: validInn(),
  };
}

/** A set stored through the command (tenant of `by`; pin_manager passes tenantId). */
export async function seedRequisiteSet(t: TestContext, by: Actor, fields: RequisiteFields = uniqueRequisites(), tenantId?: string) {
  const ref = await t.database.db.transaction((tx) =>
    createRequisiteSetCommand(tx, { fields, tenantId }, { actor: by, keyring: keyringOf(t.env), correlationId: randomUUID(), now: new Date() }));
  return { ...ref, fields };
}
