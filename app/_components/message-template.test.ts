import { createTranslator } from 'use-intl/core';
import { describe, expect, it } from 'vitest';
import en from '../i18n/messages/en.json';
import ru from '../i18n/messages/ru.json';
import { fillIn } from './message-template';

describe('fillIn: a plain-argument message filled by a string join', () => {
  for (const [locale, messages] of [['ru', ru], ['en', en]] as const) {
    it(`gives the same text as ICU formatting (${locale}: the grid cell's label and its deadline)`, () => {
      const t = createTranslator({ locale, messages, namespace: 'chessboard' }) as unknown as (key: string, values?: Record<string, string>) => string;
      const aria = fillIn(t, 'cellAria', ['number', 'floor', 'section', 'rooms', 'area', 'price', 'status', 'until']);
      const until = fillIn(t, 'until', ['time']);
      const cases = [
        { number: '1203', floor: '12', section: '1', rooms: '2 rooms', area: '54,3', price: '12 500 000 ₽', status: 'Reserved', until: until({ time: '1 dec 2026, 17:30' }) },
        { number: '7', floor: '1', section: '3', rooms: 'studio', area: '22', price: '$1', status: 'Free', until: '' },
        // values that look like markup or ICU syntax stay text
        { number: "{x} '<b>'", floor: '0', section: '0', rooms: '', area: '', price: '', status: '', until: '' },
      ];
      for (const values of cases) expect(aria(values)).toBe(t('cellAria', values));
      expect(until({ time: 'now' })).toBe(t('until', { time: 'now' }));
      expect(aria(cases[0]!)).toContain('1203');
    });
  }
});
