// fetch-standard handlers (Next.js, Bun, Deno) behind withProblems(): every kind of error answered as problem+json.
import { describe } from "vitest";
import { withProblems } from "@/blocks/error-handler/adapters/fetch";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { answerOf } from "./support/http";
import {
  IdempotencyError,
  REQUEST_HEADERS,
  rateLimitError,
  unknownError,
  validationError,
  declinedError,
  downstreamError,
  SUITE_OPTIONS,
} from "./support/scenarios";
import { itAnswersEveryErrorAsAProblem } from "./support/suite";

/** A fetch handler has no body parser: this one marks a body that is not JSON as the client's error (400). */
async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as SyntaxError, { status: 400 });
  }
}

/** The app's routes, as a framework-free handler would dispatch them. */
async function route(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (request.method === "POST") {
    if (pathname === "/in-progress")
      throw new IdempotencyError("REQUEST_IN_PROGRESS", "A request with this key is still running.", 2);
    if (pathname === "/limited") throw rateLimitError();
    if (pathname === "/validated") throw validationError();
    if (pathname === "/parsed") return Response.json(await readJson(request));
    if (pathname === "/unknown") throw unknownError();
    if (pathname === "/declined") throw declinedError();
    if (pathname === "/downstream") throw downstreamError();
  }
  return Response.json({ error: { code: "NOT_FOUND", message: "No route." } }, { status: 404 });
}

describe("fetch handler behind withProblems()", () => {
  const { logger, lines } = captureLogs();
  const handler = withProblems({ logger, ...SUITE_OPTIONS })(route);
  const send = async (method: "GET" | "POST", path: string, body?: string) =>
    answerOf(
      await handler(
        new Request(`https://api.example.com${path}`, {
          method,
          headers: { ...REQUEST_HEADERS, "content-type": "application/json" },
          ...(body === undefined ? {} : { body }),
        }),
      ),
    );

  itAnswersEveryErrorAsAProblem({ lines, send });
});
