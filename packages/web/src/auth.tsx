import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext } from 'react';
import { ApiError, api, apiKey, type Response200, request } from './api';

export type Me = Response200<'/api/v1/auth/me'>;

const MeContext = createContext<Me | null>(null);

export function MeProvider({ me, children }: { me: Me; children: ReactNode }) {
  return <MeContext.Provider value={me}>{children}</MeContext.Provider>;
}

export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside a signed-in page');
  return me;
}

/** Whether the caller holds a permission, and if not the reason to show on a disabled control. */
export function usePermission(permission: string): { allowed: boolean; reason: string } {
  const me = useContext(MeContext);
  const allowed = Boolean(me?.permissions.includes(permission));
  return { allowed, reason: allowed ? '' : `You need the permission ${permission}` };
}

/** The caller, or null while signed out (401). Any other failure is an error to show. */
export function useSelf() {
  return useQuery({
    queryKey: ['auth', 'me'],
    queryFn: async () => {
      try {
        return await api.get('/api/v1/auth/me');
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
    retry: false,
    staleTime: 60_000,
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return async () => {
    if (apiKey.get()) apiKey.clear();
    else await request('POST', '/auth/logout').catch(() => {});
    client.clear();
    window.location.assign('/login');
  };
}
