import type { ReactNode } from 'react';

export interface Column<T> {
  key: string;
  header: string;
  /** What the header cell shows instead of `header` (a select-all box); `header` still labels cells. */
  headerCell?: ReactNode;
  render: (row: T) => ReactNode;
  /** The server-side sort key this column sorts by, when it does. */
  sort?: string;
}

/** A table with optional server-side sorting (the sort lives in the URL, owned by the page). */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  sort,
  order,
  onSort,
  empty = 'Nothing here yet.',
}: {
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  sort?: string | undefined;
  order?: 'asc' | 'desc' | undefined;
  onSort?: (sort: string, order: 'asc' | 'desc') => void;
  empty?: string;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const active = column.sort !== undefined && column.sort === sort;
              const ariaSort = active ? (order === 'desc' ? 'descending' : 'ascending') : undefined;
              return (
                <th key={column.key} scope="col" aria-sort={ariaSort}>
                  {column.sort && onSort ? (
                    <button
                      type="button"
                      className="sort"
                      onClick={() =>
                        onSort(column.sort as string, active && order === 'asc' ? 'desc' : 'asc')
                      }
                    >
                      {column.header}
                      <span aria-hidden="true">{active ? (order === 'desc' ? ' ▼' : ' ▲') : ''}</span>
                    </button>
                  ) : (
                    (column.headerCell ?? column.header)
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="muted">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((column) => (
                  <td key={column.key} data-label={column.header}>
                    {column.render(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({
  page,
  perPage,
  total,
  onPage,
}: {
  page: number;
  perPage: number;
  total: number;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages} · {total} in all
      </span>
      <button type="button" className="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
