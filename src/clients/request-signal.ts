/**
 * A signal of its own for each request a remote transport sends, following the transport's long-lived one.
 *
 * The SDK's HTTP transports pass one AbortSignal (the transport's) to every fetch, and Node's fetch adds an abort
 * listener to it per request that goes only when the request is garbage-collected: a workbench calling a remote
 * server thousands of times between major collections piles up listeners (and, past 1,500, prints a
 * MaxListenersExceededWarning per call). Here the long-lived signal gets one listener, which aborts the requests
 * still linked to it; each request is linked weakly, so one that finished without saying so is collected all the same.
 */

/** Per long-lived signal: the requests linked to it. */
const linked = new WeakMap<AbortSignal, Set<WeakRef<AbortController>>>();

/** Links are swept of collected requests once this many are held. */
const SWEEP_AT = 256;

export interface RequestSignal {
  signal: AbortSignal;
  /** The request is over: unlink it (aborting the long-lived signal no longer reaches it). */
  release(): void;
}

export function requestSignal(outer: AbortSignal): RequestSignal {
  const controller = new AbortController();
  if (outer.aborted) {
    controller.abort(outer.reason);
    return { signal: controller.signal, release: () => {} };
  }
  let requests = linked.get(outer);
  if (!requests) {
    const set = new Set<WeakRef<AbortController>>();
    linked.set(outer, set);
    outer.addEventListener(
      'abort',
      () => {
        for (const ref of set) ref.deref()?.abort(outer.reason);
        set.clear();
      },
      { once: true },
    );
    requests = set;
  }
  if (requests.size >= SWEEP_AT) for (const ref of requests) if (ref.deref() === undefined) requests.delete(ref);
  const ref = new WeakRef(controller);
  requests.add(ref);
  const set = requests;
  // `controller` stays reachable through this closure for as long as whoever may release the request holds it.
  return { signal: controller.signal, release: () => void (set.delete(ref), controller) };
}
