import { afterEach, describe, expect, it } from 'vitest';
import { makeFormat } from './format';

const originals = { NumberFormat: Intl.NumberFormat, DateTimeFormat: Intl.DateTimeFormat };
afterEach(() => Object.assign(Intl, originals));

/** Counts the objects made of an Intl constructor from now on. */
function countMade(name: 'NumberFormat' | 'DateTimeFormat') {
  const made = { count: 0 };
  const original = originals[name];
  Object.assign(Intl, { [name]: new Proxy(original, { construct: (target, args) => (made.count++, Reflect.construct(target, args)) }) });
  return made;
}

describe('makeFormat', () => {
  it('makes an Intl formatter on its first use only, once per locale', () => {
    const numberFormats = countMade('NumberFormat');
    const dateFormats = countMade('DateTimeFormat');
    // a locale key of its own: makeFormat keeps one set per key for the page's life
    const f = makeFormat('lazy-test');
    expect(numberFormats.count).toBe(0);
    expect(dateFormats.count).toBe(0);

    expect(f.money(5_600_000)).toBe(`${new originals.NumberFormat('ru-RU', { maximumFractionDigits: 0 }).format(5_600_000)} ₽`);
    expect(numberFormats.count).toBe(1);
    f.money(1);
    f.money(2);
    expect(numberFormats.count).toBe(1);
    expect(dateFormats.count).toBe(0);

    const d = new Date('2026-12-01T15:25:00Z');
    expect(f.dateTime(d)).toBe(new originals.DateTimeFormat('ru-RU', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d));
    expect(dateFormats.count).toBe(1);
    expect(makeFormat('lazy-test')).toBe(f);
  });
});
