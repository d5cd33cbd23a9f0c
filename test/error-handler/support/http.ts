// How the error-handler suites reach an app over a real listener, and read its answer.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { REQUEST_HEADERS, type Answer } from "./scenarios";

/** The base URL of a server once it listens (on 127.0.0.1, port 0). */
export async function baseUrlOf(server: Server): Promise<string> {
  if (!server.listening) await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Listens for the surrounding describe block (`listen` is e.g. `() => app.listen(0, "127.0.0.1")`),
 * and closes after it; returns the base URL, known once the block's tests run.
 */
export function serveDuringSuite(listen: () => Server): () => string {
  let server: Server | undefined;
  let baseUrl = "";
  beforeAll(async () => {
    server = listen();
    baseUrl = await baseUrlOf(server);
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
  return () => baseUrl;
}

export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

/** The suite's `send`: a JSON request carrying the credential that must never reach a log line. */
export function sendTo(baseUrl: () => string) {
  return async (method: "GET" | "POST", path: string, body?: string): Promise<Answer> =>
    answerOf(
      await fetch(`${baseUrl()}${path}`, {
        method,
        headers: { ...REQUEST_HEADERS, "content-type": "application/json" },
        ...(body === undefined ? {} : { body }),
      }),
    );
}
