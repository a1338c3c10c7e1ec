import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { type Names, type Ref, useNames } from '../names';
import { ErrorBox, Loading } from './common';
import { type Column, DataTable, Pager } from './table';

export interface PageOf<T> {
  data: T[];
  total?: number;
  page?: number;
  per_page?: number;
}

/**
 * A read page over one paged list route: title, optional filters, the table, the pager, loading
 * and error states. Pages give the loader and columns; the query key names the resource.
 */
export function ResourceList<T>({
  title,
  intro,
  queryKey,
  load,
  columns,
  refs,
  rowKey,
  perPage = 50,
  toolbar,
  empty,
}: {
  title: string;
  intro?: ReactNode;
  queryKey: readonly unknown[];
  load: (page: number, perPage: number) => Promise<PageOf<T>>;
  /** The columns; a function of the page's names when `refs` lists related records. */
  columns: readonly Column<T>[] | ((names: Names | undefined) => readonly Column<T>[]);
  /** The related records a row shows by name: resolved for the whole page in one request. */
  refs?: (row: T) => readonly Ref[];
  rowKey: (row: T) => string;
  perPage?: number;
  toolbar?: ReactNode;
  /** Shown when the list is empty: what the page is for, and how the first entry gets here. */
  empty: string;
}) {
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: [...queryKey, page, perPage],
    placeholderData: keepPreviousData,
    queryFn: () => load(page, perPage),
  });
  const names = useNames(refs ? list.data?.data : undefined, refs ?? (() => []));
  return (
    <>
      <h1>{title}</h1>
      {intro ? <p className="muted">{intro}</p> : null}
      {toolbar ? <div className="filters">{toolbar}</div> : null}
      {list.isPending ? <Loading what={`Loading ${title.toLowerCase()}`} /> : null}
      {list.isError ? <ErrorBox error={list.error} /> : null}
      {list.data ? (
        <>
          <DataTable
            caption={title}
            columns={typeof columns === 'function' ? columns(names) : columns}
            rows={list.data.data}
            rowKey={rowKey}
            empty={empty}
          />
          {list.data.total !== undefined && list.data.total > perPage ? (
            <Pager page={page} perPage={perPage} total={list.data.total} onPage={setPage} />
          ) : null}
        </>
      ) : null}
    </>
  );
}
