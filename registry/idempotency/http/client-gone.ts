// The client of a Node request, as an AbortSignal: it aborts when the connection closes before the response was sent.
import type { ServerResponse } from "node:http";

/**
 * Made only for a request whose duplicate may wait (`waitMs`), so a waiter whose client left
 * stops polling; other requests never pay for the listener.
 *
 * @example
 * const request = { ..., signal: () => clientGoneSignal(res) };
 */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.closed && !res.writableFinished) controller.abort();
  else
    res.once("close", () => {
      if (!res.writableFinished) controller.abort();
    });
  return controller.signal;
}
