import { durationWords, type DurationLocale } from './duration-words';
import { STATUS_GLYPH, type ObjectStatus } from './status';

/**
 * A floor of the chessboard as HTML text: the server sends it in the first HTML, and the browser adopts
 * those elements as they are instead of hydrating a thousand cell elements. React owns a floor's row
 * element only; a floor whose cells change (a live update, the selection, a filter, the tab stop) gets
 * its whole inner HTML from here again. A pure function of its arguments, so the text is the same
 * wherever it is built.
 */

/** What a cell shows, formatted once per board (not per render, not per cell). */
export interface CellText {
  /** the sentence a screen reader reads: number, floor, section, rooms, area, price, status */
  aria: string;
  /** the short status word next to the glyph */
  short: string;
  /** rooms · area */
  meta: string;
  price: string;
  /** the hold's deadline (ms), when the object is held */
  until: number | null;
}

export interface MarkupCell {
  id: string;
  number: string;
  status: ObjectStatus;
}

export interface FloorMarkupInput {
  floor: number;
  /** the floor's slots left to right (null: no unit there), as wide as the board */
  slots: (MarkupCell | null)[];
  sections: { section: number; start: number; width: number }[];
  texts: ReadonlyMap<string, CellText>;
  /** '1' per matching cell of the floor, '0' per other, in slot order */
  matches: string;
  selectedId: string | null;
  tabStop: string | null;
  /** the time a timer's text is written at (the ticker rewrites it each second after that) */
  textNow: number;
  timer: (until: number, now: number) => string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const UNSAFE = /[&<>"']/g;

/** Text for HTML content or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE, (c) => ESCAPES[c]) : text;
}

export const sectionWidth = (w: number) => `calc(${w} * var(--cell-w) + ${w - 1} * var(--cell-gap))`;

/**
 * A countdown's text in a cell: the time left, or "⚠ просроч. 9 мин" past the deadline — in a compact
 * cell only "⚠ просроч." (the dashed border marks it too; the time is in the drawer and the tooltip).
 */
export function timerText(until: number, now: number, lang: DurationLocale, overdueShort: (time: string) => string, compact: boolean): string {
  const left = until - now;
  if (left >= 0) return durationWords(left, lang);
  return `⚠ ${compact ? overdueShort('').trim() : overdueShort(durationWords(left, lang))}`;
}

/**
 * The inner HTML of a floor's row: its header and, per section, its cells. A cell is one element with
 * the sr-only sentence as its name and aria-hidden visible parts, so the name and the content never
 * disagree; it has no listener of its own (the grid handles keys, clicks and focus by data-cell-id).
 */
export function floorMarkup({ floor, slots, sections, texts, matches, selectedId, tabStop, textNow, timer }: FloorMarkupInput): string {
  let html = `<div role="rowheader" class="floor-head" aria-colindex="1">${floor}</div>`;
  let k = 0;
  for (const s of sections) {
    html += `<div role="presentation" class="section-group" style="width:${sectionWidth(s.width)}">`;
    for (let i = 0; i < s.width; i++) {
      const cell = slots[s.start + i];
      if (!cell) {
        html += '<div class="cell cell-empty" aria-hidden="true"></div>';
        continue;
      }
      const text = texts.get(cell.id)!;
      const match = matches[k++] === '1';
      const selected = cell.id === selectedId;
      const id = escapeHtml(cell.id);
      const number = escapeHtml(cell.number);
      html += `<div role="gridcell" aria-colindex="${s.start + i + 2}" tabindex="${cell.id === tabStop ? 0 : -1}" data-cell-id="${id}"`
        + ` data-status="${cell.status}" data-number="${number}"${match ? ' data-match="true"' : ''} aria-selected="${selected}"`
        + ` class="cell status-${cell.status}${match ? '' : ' cell-dimmed'}${selected ? ' cell-selected' : ''}">`
        + `<span class="sr-only">${escapeHtml(text.aria)}</span>`
        + `<span class="cell-number" aria-hidden="true">${number}</span>`
        + `<span class="glyph" aria-hidden="true" data-short="${escapeHtml(text.short)}">${STATUS_GLYPH[cell.status]}</span>`
        + `<span class="cell-meta" aria-hidden="true">${escapeHtml(text.meta)}</span>`
        + `<span class="cell-price" aria-hidden="true">${escapeHtml(text.price)}</span>`;
      if (text.until !== null) {
        html += `<span class="countdown cell-timer${text.until < textNow ? ' countdown-overdue' : ''}" data-until="${text.until}">`
          + `${escapeHtml(timer(text.until, textNow))}</span>`;
      }
      html += '</div>';
    }
    html += '</div>';
  }
  return html;
}
