import { describe, expect, it } from 'vitest';
import en from './messages/en.json';
import ru from './messages/ru.json';

/**
 * The console glossary (messages `glossary`, #19): the Russian ops pages use its Russian words, not the
 * English jargon (release, grace, backlog, Delisted). Job names and runbook ids such as
 * `delisted-retention` or `outbox-backlog` are identifiers and stay (a hyphen next to the word).
 */
function strings(o: unknown, path = ''): Array<[string, string]> {
  if (typeof o === 'string') return [[path, o]];
  if (o && typeof o === 'object') return Object.entries(o).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k));
  return [];
}

const JARGON = /(?<![-\w])(release|grace|backlog|delisted)(?![-\w])/i;

describe('console glossary', () => {
  it('the Russian ops and saga texts use no English jargon word', () => {
    const offending = strings({ ops: ru.ops, saga: ru.saga, drawer: ru.drawer, chessboard: ru.chessboard }).filter(([, v]) => JARGON.test(v.replace(/\{\w+\}/g, '')));
    expect(offending).toEqual([]);
  });

  it('both locales label the same job counters and terms', () => {
    expect(Object.keys(ru.glossary.counters).sort()).toEqual(Object.keys(en.glossary.counters).sort());
    expect(Object.keys(ru.glossary.terms).sort()).toEqual(Object.keys(en.glossary.terms).sort());
  });

  it('the jargon check catches the words it is for', () => {
    expect(JARGON.test('после grace')).toBe(true);
    expect(JARGON.test('Delisted-карточки')).toBe(false); // hyphenated: an identifier-like compound, see the ru texts
    expect(JARGON.test('runbook delisted-retention')).toBe(false);
    expect(JARGON.test('карточки в Delisted')).toBe(true);
  });
});
