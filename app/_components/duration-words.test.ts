import { describe, expect, it } from 'vitest';
import { durationWords } from './duration-words';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe('durationWords', () => {
  it.each([
    [49 * M + 18 * S, '49 мин 18 с', '49 min 18 s'],
    [21 * H + 54 * M + 18 * S, '21 ч 54 мин', '21 h 54 min'],
    [2 * 24 * H + 3 * H + 5 * M, '2 д 3 ч', '2 d 3 h'],
    [3 * 24 * H, '3 д', '3 d'],
    [5 * H, '5 ч', '5 h'],
    [9 * M, '9 мин', '9 min'],
    [18 * S + 999, '18 с', '18 s'],
    [0, '0 с', '0 s'],
  ])('%d ms → "%s" / "%s"', (ms, ru, en) => {
    expect(durationWords(ms, 'ru')).toBe(ru);
    expect(durationWords(ms, 'en')).toBe(en);
  });

  it('an overdue (negative) time reads as its size; the caller says "overdue"', () => {
    expect(durationWords(-(9 * M + 16 * S), 'ru')).toBe('9 мин 16 с');
  });
});
