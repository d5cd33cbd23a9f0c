// Freeing a record whose create went unanswered: the store may have made it, and nothing will run under it.
import type { BoundedStore } from "./bounded-store";
import type { Observer } from "./observer";
import type { CreateResult, IdempotencyScope } from "./types";
import { sleep } from "./utils/time-limit";

/** Releasing an unanswered create: 6 tries over ~15 s, then recovery's turn. */
const RELEASE_ATTEMPTS = 6;
const RELEASE_BACKOFF_MS = 500;

/**
 * A create that timed out or failed may still have inserted the record: a slow store, or a
 * connection that died after the commit. Nothing will run under it, so free it (fenced by the
 * token we chose) once the store answers, rather than block the key until recovery and spend a
 * retry. A few attempts with backoff; after that, recovery frees it.
 *
 * @example
 * if (creating) releaseUnanswered(bounded, observer, scope, token, creating);
 */
export function releaseUnanswered(
  bounded: BoundedStore,
  observer: Observer,
  scope: IdempotencyScope,
  token: string,
  creating: Promise<CreateResult>,
): void {
  const release = async () => {
    for (let attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt++) {
      try {
        const released = await bounded.call("release", (store) => store.release(scope, token));
        if (released) observer.record("releasedUnanswered", scope);
        return;
      } catch {
        if (attempt < RELEASE_ATTEMPTS) await sleep(RELEASE_BACKOFF_MS * 2 ** (attempt - 1));
      }
    }
    observer.record("unansweredNotReleased", scope);
  };
  creating.then((late) => (late.status === "CREATED" ? release() : undefined), release);
}
