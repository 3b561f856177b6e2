import { describe, expect, it } from 'vitest';
import { escapeHtml, floorMarkup, type CellText, type FloorMarkupInput } from './grid-markup';

const text = (over: Partial<CellText> = {}): CellText => ({ aria: '1, этаж 3', short: 'своб.', meta: '2 к. · 54,3 м²', price: '12,5 млн ₽', until: null, ...over });

function floor(over: Partial<FloorMarkupInput> = {}): string {
  return floorMarkup({
    floor: 3,
    slots: [{ id: 'a', number: '301', status: 'Free' }, null, { id: 'b', number: '302', status: 'Reserved' }],
    sections: [{ section: 1, start: 0, width: 2 }, { section: 2, start: 2, width: 1 }],
    texts: new Map([['a', text()], ['b', text({ short: 'бр.', until: 10_000 })]]),
    matches: '10',
    selectedId: null,
    tabStop: 'a',
    textNow: 4_000,
    timer: (until, now) => `${(until - now) / 1000} s`,
    ...over,
  });
}

/** The floor's markup parsed into its cells' attributes and text (no DOM in unit tests: a plain scan). */
const cellsOf = (html: string) => [...html.matchAll(/<div role="gridcell"([^>]*)>(.*?)<\/div>/g)].map(([, attrs, inner]) => ({
  attrs: Object.fromEntries([...attrs.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v])),
  inner,
}));

describe('floorMarkup', () => {
  it('writes the floor head, a group per section and a gap where a unit is missing', () => {
    const html = floor();
    expect(html.startsWith('<div role="rowheader" class="floor-head" aria-colindex="1">3</div>')).toBe(true);
    expect(html.match(/class="section-group" style="width:calc\(2 \* var\(--cell-w\) \+ 1 \* var\(--cell-gap\)\)"/g)).toHaveLength(1);
    expect(html.match(/class="cell cell-empty" aria-hidden="true"/g)).toHaveLength(1);
    expect(cellsOf(html).map((c) => c.attrs['aria-colindex'])).toEqual(['2', '4']);
  });

  it('marks the tab stop, the selection, the matches and the status of each cell', () => {
    const [a, b] = cellsOf(floor({ selectedId: 'b' }));
    expect(a.attrs).toMatchObject({ tabindex: '0', 'data-cell-id': 'a', 'data-status': 'Free', 'data-number': '301', 'data-match': 'true', 'aria-selected': 'false', class: 'cell status-Free' });
    expect(b.attrs).toMatchObject({ tabindex: '-1', 'aria-selected': 'true', class: 'cell status-Reserved cell-dimmed cell-selected' });
    expect(b.attrs['data-match']).toBeUndefined();
  });

  it('names a cell by its sentence and hides the visible parts from screen readers', () => {
    const [a] = cellsOf(floor());
    expect(a.inner).toBe('<span class="sr-only">1, этаж 3</span><span class="cell-number" aria-hidden="true">301</span>'
      + '<span class="glyph" aria-hidden="true" data-short="своб.">○</span><span class="cell-meta" aria-hidden="true">2 к. · 54,3 м²</span>'
      + '<span class="cell-price" aria-hidden="true">12,5 млн ₽</span>');
  });

  it('writes a held cell\'s timer at the given time, overdue once its deadline has passed', () => {
    expect(floor()).toContain('<span class="countdown cell-timer" data-until="10000">6 s</span>');
    expect(floor({ textNow: 12_000 })).toContain('<span class="countdown cell-timer countdown-overdue" data-until="10000">-2 s</span>');
  });

  it('escapes the texts, so a number or a message cannot become markup', () => {
    const html = floor({
      slots: [{ id: 'a', number: '<b>1</b>', status: 'Free' }, null, null],
      texts: new Map([['a', text({ aria: 'A & "B"', meta: "it's" })]]),
      matches: '1',
    });
    expect(html).toContain('data-number="&lt;b&gt;1&lt;/b&gt;"');
    expect(html).toContain('<span class="sr-only">A &amp; &quot;B&quot;</span>');
    expect(html).toContain('it&#39;s');
    expect(html).not.toContain('<b>');
  });

  it('is the same text for the same arguments (the server\'s and the browser\'s floors agree)', () => {
    expect(floor()).toBe(floor());
  });
});

describe('escapeHtml', () => {
  it('leaves plain text as it is', () => {
    expect(escapeHtml('12,5 млн ₽')).toBe('12,5 млн ₽');
  });
});
