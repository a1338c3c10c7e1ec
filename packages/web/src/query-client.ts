import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api';

/** The console's one query cache: the components' and the routes' prefetches share it. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not improve by asking again; a network blip or 5xx may.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
