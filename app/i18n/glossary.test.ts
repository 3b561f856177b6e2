import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTranslator } from 'next-intl';
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

describe('plurals (ICU)', () => {
  // "{count} сообщений" reads "1 сообщений": a number right before a noun in the genitive plural must be
  // an ICU plural instead (users saw "1 карточек проектов", "≈ 2 пакетов")
  const HARD_CODED_PLURAL = /\{(\w+)\}\s+[а-яё]+(ов|ев|ей|ек|ий|ок)(?![а-яё])/i;

  it('no Russian text puts a bare number before a counted noun', () => {
    expect(strings(ru).filter(([, v]) => HARD_CODED_PLURAL.test(v))).toEqual([]);
    expect(HARD_CODED_PLURAL.test('{count} сообщений ждут')).toBe(true);
    expect(HARD_CODED_PLURAL.test('{count, plural, one {# сообщение} many {# сообщений}}')).toBe(false);
  });

  it('counts agree with their nouns in Russian and English', () => {
    const ruT = createTranslator({ locale: 'ru', messages: ru });
    const enT = createTranslator({ locale: 'en', messages: en });
    const ruCards = [1, 2, 5, 21].map((count) => `${count} ${ruT('ops.catalog.projectCards', { count })}`);
    expect(ruCards).toEqual(['1 карточка проекта', '2 карточки проектов', '5 карточек проектов', '21 карточка проекта']);
    expect([1, 3].map((count) => `${count} ${enT('ops.overview.tiles.delisted.objects', { count })}`)).toEqual(['1 object card', '3 object cards']);
    expect([1, 2, 5].map((n) => ruT('ops.catalog.batches', { n }))).toEqual(['≈ 1 пакет', '≈ 2 пакета', '≈ 5 пакетов']);
    expect(ruT('ops.alerts.CONSUMER_LAG.title', { subject: 'g', count: 1, minutes: 6 })).toBe('g: 1 сообщение ждёт, отставание около 6 мин');
    expect(enT('ops.alerts.CONSUMER_LAG.title', { subject: 'g', count: 2, minutes: 6 })).toBe('g: 2 messages waiting, about 6 min behind');
  });
});

/**
 * Words a manager does not use (docs/glossary.md lists each with the word to use instead). Every
 * message in both languages is checked; ops pages may name their tools (Kafka, DLQ, outbox, offsets,
 * topics) but not the rest. Placeholders ({job}) are values, not words, and are left out.
 */
const BANNED: Record<'ru' | 'en', { everywhere: RegExp[]; outsideOps: RegExp[] }> = {
  ru: {
    everywhere: [/холд/i, /(?<![\w-])job(?![\w-])/i, /консюмер/i, /оверрайд/i, /HasMore/, /WARN/, /advisory/i, /reserve-expired/i, /applied:/i,
      /верси[яи] \d/i, /(?<![\w-])v\d/i, /(?<![\w-])PIN(?![\w-])/, /таймлайн/i, /ранбук/i,
      // ops pages too: a process, a runbook, a setting or a column is said in Russian (its identifier may follow)
      /(?<![\w-])(worker|relay|runbook|retention)(?![\w-])/i, /last_error/, /BatchSize|MaxBatchesPerRun/, /vacuum/],
    outsideOps: [/Kafka/i, /DLQ/, /outbox/i, /offset/i, /топик/i, /(?<![а-яё])саг[аиуе](?![а-яё])/i, /relay/i, /(?<![\w-])id(?![\w-])/i],
  },
  en: {
    everywhere: [/(?<![\w-])job(?![\w-])/i, /consumer/i, /overrides?\b/i, /HasMore/, /WARN/, /advisory/i, /reserve-expired/i, /applied:/i, /version \d/i, /(?<![\w-])v\d/i],
    outsideOps: [/Kafka/i, /DLQ/, /outbox/i, /offset/i, /(?<![\w-])topic/i, /(?<![\w-])saga/i, /relay/i, /(?<![\w-])id(?![\w-])/i],
  },
};
/** Keys that name a tool or an identifier on purpose (the glossary's own entries explain the terms). */
const ALLOWED_KEYS = [/^glossary\./];
const ops = (key: string) => key.startsWith('ops.');

function jargonIn(lang: 'ru' | 'en', messages: unknown): string[] {
  const rules = BANNED[lang];
  return strings(messages)
    .filter(([k]) => !ALLOWED_KEYS.some((a) => a.test(k)))
    .filter(([k, v]) => {
      const text = v.replace(/\{\w+\}/g, '');
      return rules.everywhere.some((r) => r.test(text)) || (!ops(k) && rules.outsideOps.some((r) => r.test(text)));
    })
    .map(([k, v]) => `${lang} ${k}: ${v}`);
}

describe('words a manager uses (docs/glossary.md)', () => {
  it('no Russian or English message uses a banned word', () => {
    expect([...jargonIn('ru', ru), ...jargonIn('en', en)]).toEqual([]);
  });

  it('catches the words it is for, and lets ops name their tools', () => {
    expect(jargonIn('ru', { drawer: { a: 'Снять холд' } })).toHaveLength(1);
    expect(jargonIn('ru', { saga: { a: 'Истечение (job)' } })).toHaveLength(1);
    expect(jargonIn('ru', { ops: { a: 'Группы консюмеров' } })).toHaveLength(1);
    expect(jargonIn('ru', { ops: { a: 'HasMore' } })).toHaveLength(1);
    expect(jargonIn('ru', { booking: { a: 'Бронь v2 (Booked, версия 2)' } })).toHaveLength(1);
    expect(jargonIn('ru', { bookings: { a: 'менеджер PIN' } })).toHaveLength(1);
    expect(jargonIn('ru', { saga: { a: 'Опубликовано в Kafka' } })).toHaveLength(1);
    expect(jargonIn('ru', { ops: { a: 'Все worker будут пропускать', b: 'Runbook outbox-backlog', c: 'Retention удаляет меньше' } })).toHaveLength(3);
    expect(jargonIn('ru', { ops: { a: 'relay повторяет', b: 'last_error строк', c: 'увеличьте BatchSize', d: 'проверьте vacuum' } })).toHaveLength(4);
    expect(jargonIn('ru', { ops: { a: 'задание outbox-relay', b: 'инструкция delisted-retention-backlog', c: 'обслуживание (VACUUM)' } })).toEqual([]);
    expect(jargonIn('ru', { ops: { a: 'Kafka не отвечает', b: 'Очереди DLQ' } })).toEqual([]);
    expect(jargonIn('en', { ops: { a: 'Run {job} now?' } })).toEqual([]);
    expect(jargonIn('ru', { glossary: { terms: { hold: 'удержание (не «холд»)' } } })).toEqual([]);
  });

  it('the glossary names every banned word with the word to use', () => {
    const glossary = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../docs/glossary.md'), 'utf8');
    for (const word of ['холд', 'job', 'консюмер', 'оверрайд', 'HasMore', 'WARN', 'advisory-lock', 'reserve-expired', 'applied:', 'PIN', 'таймлайн', 'сага', 'версия', 'id']) {
      expect(glossary, word).toContain(word);
    }
  });
});
