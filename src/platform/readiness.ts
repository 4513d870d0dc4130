// What must be true before this process takes traffic, beyond "the database
// answers": parts of the start-up (the station catalogue's first load, the
// sandbox network's first pull) register here and say when they are done.
// /readyz and the routes that depend on a part answer 503 until it is.

export interface Readiness {
  /** Marks `part` as not ready yet; the returned function marks it ready (calling it twice is harmless). */
  waitFor(part: string): () => void;
  /** True when `part` (or, without an argument, every part) is ready. */
  isReady(part?: string): boolean;
  /** The parts still being waited for, in the order they were registered. */
  pending(): string[];
}

export function createReadiness(): Readiness {
  const waiting = new Set<string>();
  return {
    waitFor(part) {
      waiting.add(part);
      return () => {
        waiting.delete(part);
      };
    },
    isReady: (part) => (part === undefined ? waiting.size === 0 : !waiting.has(part)),
    pending: () => [...waiting],
  };
}

/** The station catalogue: loaded from the database (and, on a first start, pulled from the sandbox CPO network). */
export const CATALOGUE_PART = 'station catalogue';
