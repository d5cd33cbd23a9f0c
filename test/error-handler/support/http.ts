// How the error-handler suites reach an app over a real listener, and read its answer.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { REQUEST_HEADERS, type Answer } from "./scenarios";

/** The base URL of a server once it listens (on 127.0.0.1, port 0). */
export async function baseUrlOf(server: Server): Promise<string> {
  if (!server.listening) await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

/** The suite's `send`: a JSON request carrying the credential that must never reach a log line. */
export function sendTo(baseUrl: () => string) {
  return async (method: "GET" | "POST", path: string, body?: string): Promise<Answer> =>
    answerOf(await fetch(`${baseUrl()}${path}`, { method, headers: { ...REQUEST_HEADERS, "content-type": "application/json" }, ...(body === undefined ? {} : { body }) }));
}
