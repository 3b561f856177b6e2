'use client';
import { Group } from '@visx/group';
import { PatternCircles, PatternLines } from '@visx/pattern';
import { scaleLinear } from '@visx/scale';
import { Bar } from '@visx/shape';
import { useEffect, useId, useRef, useState } from 'react';

/**
 * Horizontal bars drawn with visx (plain SVG, so it renders on the server too). Never colour alone:
 * every bar has its own fill pattern (stripes of different angles, dots) over an Okabe–Ito colour, an
 * outline in the text colour, and its label and value written beside it; the same numbers are in the
 * table that goes with every chart. Text and outlines use the page's colours (`currentColor`, CSS
 * variables), so the chart follows the console's theme.
 */

export interface BarDatum {
  key: string;
  label: string;
  value: number;
  /** what is written after the bar, e.g. "42 · 35 %" */
  text: string;
}

const FILLS = [
  { colour: '#0072b2', kind: 'lines', orientation: ['diagonal'] },
  { colour: '#e69f00', kind: 'lines', orientation: ['horizontal'] },
  { colour: '#009e73', kind: 'dots' },
  { colour: '#cc79a7', kind: 'lines', orientation: ['vertical'] },
  { colour: '#56b4e9', kind: 'lines', orientation: ['diagonalRightToLeft'] },
  { colour: '#d55e00', kind: 'lines', orientation: ['diagonal', 'diagonalRightToLeft'] },
] as const;

/** the container's width in px, for drawing at the real size (labels never shrink on a phone) */
function useWidth(initial: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setWidth(Math.max(260, Math.floor(el.clientWidth)));
    update();
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}

export function BarChart({ data, title, max, testId, fillOffset = 0 }: {
  data: BarDatum[];
  /** read out instead of the picture, with every bar's label and text */
  title: string;
  /** the value of a full bar (the largest value when absent) */
  max?: number;
  testId?: string;
  /** which pattern the first bar takes, so two charts of different things do not look alike */
  fillOffset?: number;
}) {
  const [ref, width] = useWidth(560);
  const id = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  const row = 30;
  const labelWidth = Math.min(150, Math.floor(width * 0.34));
  const textWidth = 92;
  const barArea = Math.max(40, width - labelWidth - textWidth - 12);
  const height = data.length * row + 4;
  const scale = scaleLinear<number>({ domain: [0, Math.max(1, max ?? Math.max(0, ...data.map((d) => d.value)))], range: [0, barArea], clamp: true });
  const summary = `${title}: ${data.map((d) => `${d.label} ${d.text}`).join('; ')}`;
  return (
    <div ref={ref} className="report-chart" data-testid={testId}>
      <svg width={width} height={height} role="img" aria-label={summary}>
        <defs>
          {data.map((d, i) => {
            const fill = FILLS[(i + fillOffset) % FILLS.length]!;
            const pid = `${id}-p${i}`;
            return fill.kind === 'dots'
              ? <PatternCircles key={d.key} id={pid} height={7} width={7} radius={1.6} fill="#ffffff" background={fill.colour} complement />
              : <PatternLines key={d.key} id={pid} height={7} width={7} stroke="#ffffff" strokeWidth={1.6} background={fill.colour} orientation={[...fill.orientation]} />;
          })}
        </defs>
        {data.map((d, i) => {
          const w = d.value > 0 ? Math.max(2, scale(d.value)) : 0;
          const y = i * row + 4;
          return (
            <Group key={d.key} top={y}>
              <text x={labelWidth - 8} y={row / 2 - 2} textAnchor="end" dominantBaseline="middle" className="report-chart-label" fill="currentColor">
                {clip(d.label, labelWidth)}
              </text>
              <rect x={labelWidth} y={1} width={barArea} height={row - 10} className="report-chart-track" />
              {w > 0 ? <Bar x={labelWidth} y={1} width={w} height={row - 10} fill={`url(#${id}-p${i})`} stroke="currentColor" strokeWidth={1} /> : null}
              <text x={labelWidth + w + 6} y={row / 2 - 2} dominantBaseline="middle" className="report-chart-value" fill="currentColor">{d.text}</text>
            </Group>
          );
        })}
      </svg>
    </div>
  );
}

/** a label that would run into the bars is cut with an ellipsis (the table has it whole) */
function clip(label: string, width: number): string {
  const fits = Math.max(4, Math.floor((width - 12) / 7));
  return label.length > fits ? `${label.slice(0, fits - 1)}…` : label;
}
