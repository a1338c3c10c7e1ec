import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
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
  rowKey,
  perPage = 50,
  toolbar,
  empty,
}: {
  title: string;
  intro?: ReactNode;
  queryKey: readonly unknown[];
  load: (page: number, perPage: number) => Promise<PageOf<T>>;
  columns: readonly Column<T>[];
  rowKey: (row: T) => string;
  perPage?: number;
  toolbar?: ReactNode;
  empty?: string;
}) {
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: [...queryKey, page, perPage],
    placeholderData: keepPreviousData,
    queryFn: () => load(page, perPage),
  });
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
            columns={columns}
            rows={list.data.data}
            rowKey={rowKey}
            {...(empty ? { empty } : {})}
          />
          {list.data.total !== undefined && list.data.total > perPage ? (
            <Pager page={page} perPage={perPage} total={list.data.total} onPage={setPage} />
          ) : null}
        </>
      ) : null}
    </>
  );
}
