'use client';
import type { ComponentProps, ReactNode } from 'react';

/** One column of an ops table: its heading and how a row fills its cell. */
export interface OpsColumn<Row> {
  key: string;
  /** the heading (an action column passes an sr-only label: the header cell still has a name) */
  header: ReactNode;
  headerClassName?: string;
  /** the URL sort key, where the column sorts (needs the table's `sort`) */
  sortKey?: string;
  cell: (row: Row) => ReactNode;
  className?: string | ((row: Row) => string | undefined);
  /** further attributes of the cell (a test id, a title) */
  cellProps?: (row: Row) => CellAttributes;
  /** the cell heads its row (`<th scope="row">`) or a group of rows (`rowgroup`, with `rowSpan`) */
  rowHeader?: 'row' | 'rowgroup';
  /** rows the cell spans; 0 leaves the cell out (a cell above spans it) */
  rowSpan?: (row: Row) => number;
}

export interface OpsTableSort {
  key: string;
  dir: 'asc' | 'desc';
  /** a click on a heading: the active column turns round, another starts descending */
  onSort: (key: string, dir: 'asc' | 'desc') => void;
}

type DataAttributes = { [data: `data-${string}`]: string | number | undefined };
type RowAttributes = ComponentProps<'tr'> & DataAttributes;
type CellAttributes = Pick<ComponentProps<'td'>, 'title'> & DataAttributes;

/**
 * The ops console's table: a scrollable, focusable wrapper (keyboard users scroll wide tables), a
 * caption for screen readers, sortable headings that say their order (aria-sort), and the loading
 * and empty notes under the table. The Playwright specs find the tables by `testId` and the rows'
 * data attributes (`rowProps`), so those stay what each page passes.
 */
export function OpsTable<Row>({
  testId, caption, captionClassName = 'sr-only', auto = false, columns, rows, rowKey, rowProps, sort, loading, empty,
}: {
  testId: string;
  caption: ReactNode;
  /** sr-only unless the caption is to be seen */
  captionClassName?: string;
  /** columns as wide as their content (`ops-table-auto`) */
  auto?: boolean;
  /** `false` leaves a column out (e.g. actions for a read-only role) */
  columns: readonly (OpsColumn<Row> | false)[];
  /** undefined while the first answer is awaited */
  rows: readonly Row[] | undefined;
  rowKey: (row: Row) => string | number;
  rowProps?: (row: Row) => RowAttributes;
  sort?: OpsTableSort;
  /** shown while `loading` is not undefined */
  loading?: ReactNode;
  /** shown when the answer has no rows */
  empty?: { text: ReactNode; testId?: string };
}) {
  const shown = columns.filter((c): c is OpsColumn<Row> => c !== false);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className={`table ops-table${auto ? ' ops-table-auto' : ''}`} data-testid={testId}>
        <caption className={captionClassName}>{caption}</caption>
        <thead>
          <tr>
            {shown.map((c) => (c.sortKey && sort ? <SortHeader key={c.key} column={c} sortKey={c.sortKey} sort={sort} /> : (
              <th key={c.key} scope="col" className={c.headerClassName}>{c.header}</th>
            )))}
          </tr>
        </thead>
        <tbody>
          {rows?.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {shown.map((c) => {
                const span = c.rowSpan?.(row);
                if (span === 0) return null;
                const className = typeof c.className === 'function' ? c.className(row) : c.className;
                const props = { rowSpan: span, className, ...c.cellProps?.(row) };
                return c.rowHeader
                  ? <th key={c.key} scope={c.rowHeader} {...props}>{c.cell(row)}</th>
                  : <td key={c.key} {...props}>{c.cell(row)}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {loading !== undefined && loading !== null ? <p className="muted">{loading}</p> : null}
      {empty && rows && rows.length === 0 ? <p className="empty-state" data-testid={empty.testId}>{empty.text}</p> : null}
    </div>
  );
}

function SortHeader<Row>({ column, sortKey, sort }: { column: OpsColumn<Row>; sortKey: string; sort: OpsTableSort }) {
  const active = sort.key === sortKey;
  return (
    <th scope="col" className={column.headerClassName} aria-sort={active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="sort-button" onClick={() => sort.onSort(sortKey, active && sort.dir === 'desc' ? 'asc' : 'desc')}>
        {column.header} <span aria-hidden="true">{active ? (sort.dir === 'asc' ? '▲' : '▼') : '↕'}</span>
      </button>
    </th>
  );
}
