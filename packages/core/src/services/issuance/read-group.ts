/**
 * Shared reads for concurrent issuances: the profile, the enabled policy rules and the issuer
 * every enrollment of a profile reads are the same rows, so callers that ask for the same key
 * while a read of it is pending share one read — but only a read that starts AFTER they asked.
 * A caller arriving while a read is already on its way to the database does not take that
 * read's (possibly older) answer: it joins the next read, which starts as soon as the current
 * one finishes. Every caller thus sees at least everything committed before it called, exactly
 * as with its own read; nothing is cached beyond the read itself.
 */
export class ReadGroup<V> {
  readonly #keys = new Map<string, KeyState<V>>();

  constructor(private readonly read: (key: string) => Promise<V>) {}

  get(key: string): Promise<V> {
    let state = this.#keys.get(key);
    if (!state) {
      state = { running: false, next: null };
      this.#keys.set(key, state);
    }
    if (state.next) return state.next.promise;
    const next = deferred<V>();
    state.next = next;
    if (!state.running) this.#start(key, state);
    return next.promise;
  }

  #start(key: string, state: KeyState<V>): void {
    const current = state.next!;
    state.next = null;
    state.running = true;
    let read: Promise<V>;
    try {
      read = this.read(key);
    } catch (error) {
      read = Promise.reject(error);
    }
    read.then(current.resolve, current.reject).finally(() => {
      state.running = false;
      if (state.next) this.#start(key, state);
      else this.#keys.delete(key);
    });
  }
}

interface KeyState<V> {
  running: boolean;
  /** The read the callers since the running one started wait for; not started yet. */
  next: Deferred<V> | null;
}

interface Deferred<V> {
  promise: Promise<V>;
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
}

function deferred<V>(): Deferred<V> {
  let resolve!: (value: V) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
