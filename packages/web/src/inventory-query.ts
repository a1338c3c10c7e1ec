import { api } from './api';
import type { InventorySearch } from './router';

export const INVENTORY_PER_PAGE = 25;

/**
 * The inventory's list query for the filters in the URL: the page reads it, and the route
 * starts it as soon as the URL is matched, in parallel with GET /auth/me and the page's script,
 * instead of after both (at 1,000,000 certificates the request is the shorter part; the
 * waterfall before it was most of the wait).
 */
export function inventoryQuery(search: InventorySearch) {
  return {
    // The columns shown are not part of the list request.
    queryKey: ['certificates', { ...search, cols: undefined }] as const,
    // A list fetched by the route moments before the page mounts is not fetched again.
    staleTime: 2_000,
    queryFn: () =>
      api.get('/api/v1/certificates', {
        query: {
          page: search.page ?? 1,
          per_page: INVENTORY_PER_PAGE,
          ...(search.search ? { search: search.search } : {}),
          ...(search.status ? { status: search.status } : {}),
          ...(search.owner_id ? { owner_id: search.owner_id } : {}),
          ...(search.issuer_id ? { issuer_id: search.issuer_id } : {}),
          ...(search.team_id ? { team_id: search.team_id } : {}),
          ...(search.environment ? { environment: search.environment } : {}),
          ...(search.expires_after ? { expires_after: search.expires_after } : {}),
          ...(search.expires_before ? { expires_before: search.expires_before } : {}),
          ...(search.sort ? { sort: search.sort } : {}),
          ...(search.order ? { order: search.order } : {}),
        },
      }),
  };
}
