// Page-number pagination shared by every list endpoint:
// page (1-based, default 1), page_size (default 20, max 100),
// {count, next, previous, results} with absolute links that keep the other
// query parameters. A page past the last one (other than page 1) is 404.
import { type TSchema, Type } from 'typebox';
import { AppError } from '../errors.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, 1-based.' })),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: `Results per page (max ${MAX_PAGE_SIZE}).` }),
  ),
};

export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({
    count: Type.Integer({ description: 'Number of results across all pages.' }),
    next: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
    previous: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
    results: Type.Array(item),
  });
}

export interface PageRequest {
  page: number;
  pageSize: number;
  limit: number;
  offset: number;
}

export function pageRequest(query: { page?: number; page_size?: number }): PageRequest {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, limit: pageSize, offset: (page - 1) * pageSize };
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/**
 * Builds the page answer. `requestUrl` is the request's path and query
 * (request.url); links are made absolute against the public base URL.
 */
export function toPage<T>(baseUrl: string, requestUrl: string, page: PageRequest, count: number, results: T[]): Page<T> {
  const lastPage = Math.max(1, Math.ceil(count / page.pageSize));
  if (page.page > lastPage) throw new AppError('not_found', `Page ${page.page} does not exist; the last page is ${lastPage}.`);
  const url = new URL(requestUrl, 'http://placeholder');
  const link = (n: number) => {
    const params = new URLSearchParams(url.search);
    params.set('page', String(n));
    return `${baseUrl}${url.pathname}?${params.toString()}`;
  };
  return {
    count,
    next: page.page < lastPage ? link(page.page + 1) : null,
    previous: page.page > 1 ? link(page.page - 1) : null,
    results,
  };
}
