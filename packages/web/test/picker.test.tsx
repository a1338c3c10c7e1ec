// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PICKER_PAGE, Picker } from '../src/components/picker';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** An install with thousands of owners, answering like GET /api/v1/owners: `search` filters server-side. */
const OWNERS = Array.from({ length: 3000 }, (_, i) => ({
  id: `own-${i}`,
  name: `Owner ${String(i).padStart(4, '0')}`,
}));
let asked: URL[] = [];

function answer(url: URL) {
  const one = /^\/api\/v1\/owners\/([^/]+)$/.exec(url.pathname);
  if (one) return OWNERS.find((o) => o.id === decodeURIComponent(one[1] as string));
  const search = (url.searchParams.get('search') ?? '').toLowerCase();
  const perPage = Number(url.searchParams.get('per_page'));
  const hits = OWNERS.filter((o) => o.name.toLowerCase().includes(search));
  return { data: hits.slice(0, perPage), total: hits.length, page: 1, per_page: perPage };
}

beforeEach(() => {
  asked = [];
  vi.stubGlobal('fetch', async (input: string) => {
    const url = new URL(input, 'http://console.test');
    asked.push(url);
    return new Response(JSON.stringify(answer(url)), { headers: { 'content-type': 'application/json' } });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function Form({ initial = '', onPick }: { initial?: string; onPick: (id: string) => void }) {
  const [value, setValue] = useState(initial);
  return (
    <Picker
      resource="owners"
      label="Owner"
      value={value}
      onChange={(id) => {
        setValue(id);
        onPick(id);
      }}
    />
  );
}

function mount(initial?: string) {
  const picked: string[] = [];
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <Form {...(initial ? { initial } : {})} onPick={(id) => picked.push(id)} />
    </QueryClientProvider>,
  );
  return picked;
}

const select = () => screen.getByLabelText('Owner', { selector: 'select' }) as HTMLSelectElement;
const offered = () => Array.from(select().options, (o) => o.textContent);

describe('the searchable picker', () => {
  it('offers the first page and says how many more exist, without fetching them', async () => {
    mount();
    await screen.findByText(`${PICKER_PAGE} of 3000 owners shown; type to narrow.`);
    expect(offered()).toHaveLength(PICKER_PAGE + 1);
    expect(asked.every((u) => u.searchParams.get('per_page') === String(PICKER_PAGE))).toBe(true);
  });

  it('finds an owner far past the first hundred by asking the list route to search, and picks it', async () => {
    const picked = mount();
    await screen.findByText(/of 3000 owners shown/);
    fireEvent.change(screen.getByLabelText('Search owners'), { target: { value: 'owner 2718' } });
    await waitFor(() => expect(offered()).toEqual(['— choose —', 'Owner 2718']));
    expect(asked.at(-1)?.searchParams.get('search')).toBe('owner 2718');
    await screen.findByText('1 owner matching “owner 2718”.');
    fireEvent.change(select(), { target: { value: 'own-2718' } });
    expect(picked).toEqual(['own-2718']);
    expect(select().value).toBe('own-2718');
  });

  it('keeps offering the chosen owner by name while the search shows others', async () => {
    mount('own-2999');
    await waitFor(() => expect(offered()).toContain('Owner 2999'));
    expect(select().value).toBe('own-2999');
    expect(asked.some((u) => u.pathname === '/api/v1/owners/own-2999')).toBe(true);
  });
});
