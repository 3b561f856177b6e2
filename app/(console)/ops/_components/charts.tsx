'use client';
import { useEffect, useRef, useState } from 'react';
import { useFormat } from '@/app/_components/format';

/**
 * Inline SVG charts. Colours are Okabe–Ito (colour-blind safe), every series is also told apart by
 * its mark (bars vs line with dots) and named in a text legend; the numbers are in the <title>s and
 * in a visually hidden summary, so nothing relies on colour or on seeing the picture.
 */

export const SERIES_COLOURS = { blue: '#0072b2', orange: '#e69f00', vermillion: '#d55e00', green: '#009e73', grey: '#6b7280' } as const;

/** The container's width in px (charts are drawn at their real size, so text is never stretched). */
function useWidth(initial = 720) {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setWidth(Math.max(240, Math.floor(el.clientWidth - 16)));
    update();
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}

export interface Point {
  at: Date;
  value: number;
}

/** A tiny trend line with its last value marked; `label` is read out instead of the picture. */
export function Sparkline({ points, label, width = 120, height = 28, colour = SERIES_COLOURS.blue }: {
  points: Point[] | undefined;
  label: string;
  width?: number;
  height?: number;
  colour?: string;
}) {
  const f = useFormat();
  if (!points || points.length < 2) {
    return <svg className="sparkline sparkline-empty" width={width} height={height} role="img" aria-label={label}><line x1="0" x2={width} y1={height - 2} y2={height - 2} stroke="#d3d8df" strokeDasharray="3 3" /></svg>;
  }
  const xs = points.map((p) => p.at.getTime());
  const ys = points.map((p) => p.value);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [Math.min(0, ...ys), Math.max(...ys)];
  const sx = (x: number) => 2 + ((x - x0) / (x1 - x0 || 1)) * (width - 6);
  const sy = (y: number) => height - 3 - ((y - y0) / (y1 - y0 || 1)) * (height - 6);
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${sx(p.at.getTime()).toFixed(1)},${sy(p.value).toFixed(1)}`).join(' ');
  const last = points[points.length - 1]!;
  return (
    <svg className="sparkline" width={width} height={height} role="img" aria-label={label}>
      <title>{`${label}: ${points.map((p) => `${f.time(p.at)} ${f.integer(p.value)}`).join(', ')}`}</title>
      <path d={d} fill="none" stroke={colour} strokeWidth="1.6" strokeLinejoin="round" />
      <circle cx={sx(last.at.getTime())} cy={sy(last.value)} r="2.6" fill={colour} />
    </svg>
  );
}

export interface BarSeries {
  key: string;
  label: string;
  colour: string;
  /** hatched bars tell the second series apart without colour */
  pattern?: boolean;
}

/**
 * Stacked bars per time bucket, with a labelled y scale and the first/last bucket times.
 * `rows[i][series.key]` is the bar height of that series in bucket i.
 */
export function StackedBars({ rows, series, label, height = 140, timeFormat }: {
  rows: ({ at: Date } & Record<string, number | Date>)[];
  series: BarSeries[];
  label: string;
  height?: number;
  timeFormat: (d: Date) => string;
}) {
  const f = useFormat();
  const [ref, width] = useWidth();
  const pad = { l: 34, r: 8, t: 8, b: 20 };
  const totals = rows.map((r) => series.reduce((s, x) => s + Number(r[x.key] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bw = (width - pad.l - pad.r) / Math.max(1, rows.length);
  const sy = (v: number) => ((height - pad.t - pad.b) * v) / max;
  const id = label.replace(/[^a-z0-9]/gi, '').slice(0, 12) || 'bars';
  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} className="chart-svg" role="img" aria-label={label}>
        <defs>
          <pattern id={`hatch-${id}`} width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="5" height="5" fill={SERIES_COLOURS.orange} />
            <line x1="0" y1="0" x2="0" y2="5" stroke="#7a5200" strokeWidth="1.6" />
          </pattern>
        </defs>
        <line x1={pad.l} x2={width - pad.r} y1={height - pad.b} y2={height - pad.b} stroke="#9aa3ae" />
        <text x={pad.l - 4} y={pad.t + 8} textAnchor="end" className="chart-axis">{f.integer(max)}</text>
        <text x={pad.l - 4} y={height - pad.b} textAnchor="end" className="chart-axis">0</text>
        {rows.map((r, i) => {
          let y = height - pad.b;
          return (
            <g key={i}>
              <title>{`${timeFormat(r.at)}: ${series.map((s) => `${s.label} ${f.integer(Number(r[s.key] ?? 0))}`).join(', ')}`}</title>
              {series.map((s) => {
                const h = sy(Number(r[s.key] ?? 0));
                y -= h;
                return h > 0 ? <rect key={s.key} x={pad.l + i * bw + 1} y={y} width={Math.max(1, bw - 2)} height={h} fill={s.pattern ? `url(#hatch-${id})` : s.colour} /> : null;
              })}
            </g>
          );
        })}
        {rows.length > 0 ? (
          <>
            <text x={pad.l} y={height - 5} className="chart-axis">{timeFormat(rows[0]!.at)}</text>
            <text x={width - pad.r} y={height - 5} textAnchor="end" className="chart-axis">{timeFormat(rows[rows.length - 1]!.at)}</text>
          </>
        ) : null}
      </svg>
      <figcaption className="chart-legend">
        {series.map((s) => (
          <span key={s.key} className="chart-legend-item">
            <svg width="14" height="10" aria-hidden="true"><rect width="14" height="10" fill={s.pattern ? `url(#hatch-${id})` : s.colour} /></svg>
            {s.label}: {f.integer(rows.reduce((sum, r) => sum + Number(r[s.key] ?? 0), 0))}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/**
 * Two measures of the same runs over time: bars (left scale) and a line with dots (right scale),
 * e.g. items handled and duration per job run.
 */
export function BarsAndLine({ points, bars, line, label, height = 150, timeFormat, lineFormat }: {
  points: { at: Date; bar: number | null; line: number | null }[];
  bars: { label: string };
  line: { label: string };
  label: string;
  height?: number;
  timeFormat: (d: Date) => string;
  lineFormat: (v: number) => string;
}) {
  const f = useFormat();
  const [ref, width] = useWidth();
  const pad = { l: 40, r: 64, t: 10, b: 20 };
  const sorted = [...points].sort((a, b) => a.at.getTime() - b.at.getTime());
  const maxBar = Math.max(1, ...sorted.map((p) => p.bar ?? 0));
  const maxLine = Math.max(1, ...sorted.map((p) => p.line ?? 0));
  const bw = (width - pad.l - pad.r) / Math.max(1, sorted.length);
  const inner = height - pad.t - pad.b;
  const cx = (i: number) => pad.l + i * bw + bw / 2;
  const ly = (v: number) => height - pad.b - (inner * v) / maxLine;
  const path = sorted.map((p, i) => (p.line === null ? null : `${cx(i).toFixed(1)},${ly(p.line).toFixed(1)}`)).filter(Boolean).join(' L');
  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} className="chart-svg" role="img" aria-label={label}>
        <line x1={pad.l} x2={width - pad.r} y1={height - pad.b} y2={height - pad.b} stroke="#9aa3ae" />
        <text x={pad.l - 4} y={pad.t + 8} textAnchor="end" className="chart-axis">{f.integer(maxBar)}</text>
        <text x={pad.l - 4} y={height - pad.b} textAnchor="end" className="chart-axis">0</text>
        <text x={width - pad.r + 4} y={pad.t + 8} className="chart-axis">{lineFormat(maxLine)}</text>
        {sorted.map((p, i) => (
          <g key={i}>
            <title>{`${timeFormat(p.at)}: ${bars.label} ${p.bar ?? '—'}, ${line.label} ${p.line === null ? '—' : lineFormat(p.line)}`}</title>
            {p.bar ? <rect x={pad.l + i * bw + 1} y={height - pad.b - (inner * p.bar) / maxBar} width={Math.max(1, bw - 2)} height={(inner * p.bar) / maxBar} fill={SERIES_COLOURS.blue} opacity="0.8" /> : null}
          </g>
        ))}
        {path ? <path d={`M${path}`} fill="none" stroke={SERIES_COLOURS.vermillion} strokeWidth="1.8" /> : null}
        {sorted.map((p, i) => (p.line === null ? null : <circle key={i} cx={cx(i)} cy={ly(p.line)} r="2.6" fill="#fff" stroke={SERIES_COLOURS.vermillion} strokeWidth="1.6" />))}
        {sorted.length > 0 ? (
          <>
            <text x={pad.l} y={height - 5} className="chart-axis">{timeFormat(sorted[0]!.at)}</text>
            <text x={width - pad.r} y={height - 5} textAnchor="end" className="chart-axis">{timeFormat(sorted[sorted.length - 1]!.at)}</text>
          </>
        ) : null}
      </svg>
      <figcaption className="chart-legend">
        <span className="chart-legend-item"><svg width="14" height="10" aria-hidden="true"><rect width="14" height="10" fill={SERIES_COLOURS.blue} opacity="0.8" /></svg>{bars.label}</span>
        <span className="chart-legend-item"><svg width="18" height="10" aria-hidden="true"><line x1="0" x2="18" y1="5" y2="5" stroke={SERIES_COLOURS.vermillion} strokeWidth="2" /><circle cx="9" cy="5" r="3" fill="#fff" stroke={SERIES_COLOURS.vermillion} strokeWidth="1.6" /></svg>{line.label}</span>
      </figcaption>
    </figure>
  );
}

/** A value-over-time line with scale labels (e.g. the Delisted backlog over 30 days). */
export function LineChart({ series, label, height = 140, timeFormat }: {
  series: { key: string; label: string; colour: string; dashed?: boolean; points: Point[] }[];
  label: string;
  height?: number;
  timeFormat: (d: Date) => string;
}) {
  const f = useFormat();
  const [ref, width] = useWidth();
  const pad = { l: 44, r: 8, t: 10, b: 20 };
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return null;
  const xs = all.map((p) => p.at.getTime());
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const max = Math.max(1, ...all.map((p) => p.value));
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0 || 1)) * (width - pad.l - pad.r);
  const sy = (v: number) => height - pad.b - ((height - pad.t - pad.b) * v) / max;
  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} className="chart-svg" role="img" aria-label={label}>
        <line x1={pad.l} x2={width - pad.r} y1={height - pad.b} y2={height - pad.b} stroke="#9aa3ae" />
        <text x={pad.l - 4} y={pad.t + 8} textAnchor="end" className="chart-axis">{f.integer(max)}</text>
        <text x={pad.l - 4} y={height - pad.b} textAnchor="end" className="chart-axis">0</text>
        {series.map((s) => (
          <g key={s.key}>
            <title>{`${s.label}: ${s.points.map((p) => `${timeFormat(p.at)} ${f.integer(p.value)}`).join(', ')}`}</title>
            <path d={s.points.map((p, i) => `${i ? 'L' : 'M'}${sx(p.at.getTime()).toFixed(1)},${sy(p.value).toFixed(1)}`).join(' ')} fill="none" stroke={s.colour} strokeWidth="1.8" strokeDasharray={s.dashed ? '6 4' : undefined} />
          </g>
        ))}
        <text x={pad.l} y={height - 5} className="chart-axis">{timeFormat(new Date(x0))}</text>
        <text x={width - pad.r} y={height - 5} textAnchor="end" className="chart-axis">{timeFormat(new Date(x1))}</text>
      </svg>
      <figcaption className="chart-legend">
        {series.map((s) => (
          <span key={s.key} className="chart-legend-item">
            <svg width="18" height="10" aria-hidden="true"><line x1="0" x2="18" y1="5" y2="5" stroke={s.colour} strokeWidth="2" strokeDasharray={s.dashed ? '5 3' : undefined} /></svg>
            {s.label}{s.points.length ? `: ${f.integer(s.points[s.points.length - 1]!.value)}` : ''}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
