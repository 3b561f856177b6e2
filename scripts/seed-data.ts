import { createHash } from 'node:crypto';

/** Deterministic ids: the same name always yields the same UUID (v5-shaped), so the seed is idempotent. */
export function idFor(name: string): string {
  const h = createHash('sha1').update(`pin-seed:${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** mulberry32: a tiny seeded PRNG (fixed seed → the same demo data on every machine). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A copy of `items` in a seeded order (Fisher–Yates on prng): the delivery orders of the property and fault scenarios, reproducible from their seed. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const rnd = prng(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export const TENANTS = [
  { key: 'A', id: idFor('tenant:A'), name: 'Северный Девелопмент' },
  { key: 'B', id: idFor('tenant:B'), name: 'ГородСтрой' },
] as const;

export const PROJECTS = [
  { key: 'P1', tenant: 'A', name: 'ЖК «Северное сияние»', city: 'Санкт-Петербург' },
  { key: 'P2', tenant: 'A', name: 'ЖК «Речной квартал»', city: 'Санкт-Петербург' },
  { key: 'P3', tenant: 'B', name: 'ЖК «Городские сады»', city: 'Москва' },
] as const;

/** 5 buildings, 9–25 floors: 204 + 400 + 72 + 240 + 576 = 1,492 property objects. */
export const BUILDINGS = [
  { key: 'B1', project: 'P1', name: 'Корпус 1', sections: 3, floors: 17, perSection: 4 },
  { key: 'B2', project: 'P1', name: 'Корпус 2', sections: 4, floors: 25, perSection: 4 },
  { key: 'B3', project: 'P2', name: 'Корпус 1', sections: 2, floors: 9, perSection: 4 },
  { key: 'B4', project: 'P3', name: 'Корпус А', sections: 3, floors: 20, perSection: 4 },
  { key: 'B5', project: 'P3', name: 'Корпус Б', sections: 4, floors: 24, perSection: 6 },
] as const;

export const DEMO_PASSWORD = 'demo-password-1';

export const USERS = [
  { email: 'agent@pin.local', name: 'Агент Иванов', role: 'agent', tenant: 'A' },
  { email: 'agent-b@pin.local', name: 'Агент Петров', role: 'agent', tenant: 'B' },
  { email: 'dev-manager@pin.local', name: 'Менеджер застройщика A', role: 'developer_manager', tenant: 'A' },
  { email: 'dev-manager-b@pin.local', name: 'Менеджер застройщика B', role: 'developer_manager', tenant: 'B' },
  { email: 'pin-manager@pin.local', name: 'Менеджер ПИН', role: 'pin_manager', tenant: null },
  { email: 'ops@pin.local', name: 'Дежурный ops', role: 'ops', tenant: null },
  { email: 'viewer@pin.local', name: 'Наблюдатель', role: 'viewer', tenant: 'A' },
  // no tenant: an investor's deals are with several developers (crm.deals.investor_id)
  { email: 'investor@pin.local', name: 'Инвестор Смирнов', role: 'investor', tenant: null },
] as const;
