// The error handler's grown features against the real packages: OpenTelemetry's active span, Standard Schema validators.
import { context, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type } from "arktype";
import { Hono } from "hono";
import * as v from "valibot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseRequest, type ProblemBody } from "@/blocks/error-handler";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { answerOf } from "./support/http";
import { TRACE_ID } from "./support/scenarios";

const SPAN_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

describe("the active OpenTelemetry span's trace id, read without importing @opentelemetry/api", () => {
  const { logger } = captureLogs();
  const app = new Hono();
  app.onError(problemDetails({ logger }).onError);
  // What an instrumentation does: the request runs inside its span's context.
  app.use((_c, next) => {
    const span = trace.wrapSpanContext({
      traceId: SPAN_TRACE_ID,
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
    });
    return context.with(trace.setSpan(context.active(), span), next);
  });
  app.get("/fail", () => {
    throw new Error("boom");
  });

  beforeAll(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  afterAll(() => context.disable());

  it("is in the problem, and wins over the traceparent header (the span is the request's own)", async () => {
    const res = await app.request("/fail", { headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` } });
    expect(((await res.json()) as ProblemBody).traceId).toBe(SPAN_TRACE_ID);
  });

  it("is absent outside a span, where the header decides", async () => {
    context.disable();
    const res = await app.request("/fail", { headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` } });
    expect(((await res.json()) as ProblemBody).traceId).toBe(TRACE_ID);
  });
});

describe("Standard Schema issues with RFC 6901 pointers, from zod, valibot and arktype", () => {
  const { logger } = captureLogs();
  const schemas = {
    zod: z.object({ "a/b~c": z.array(z.object({ amount: z.number() })) }),
    valibot: v.object({ "a/b~c": v.array(v.object({ amount: v.number() })) }),
    arktype: type({ "a/b~c": type({ amount: "number" }).array() }),
  };
  const app = new Hono();
  app.onError(problemDetails({ logger }).onError);
  app.post("/:validator", async (c) =>
    Response.json(await parseRequest(schemas[c.req.param("validator") as keyof typeof schemas], await c.req.json())),
  );

  for (const validator of Object.keys(schemas)) {
    it(`${validator}: the issue's pointer escapes "/" and "~", and its message never holds the value`, async () => {
      const answer = await answerOf(
        await app.request(`/${validator}`, {
          method: "POST",
          body: JSON.stringify({ "a/b~c": [{ amount: "4242424242424242" }] }),
        }),
      );
      const body = JSON.parse(answer.text) as ProblemBody;
      expect(answer.status).toBe(422);
      expect(body.issues).toMatchObject([{ path: ["a/b~c", 0, "amount"], pointer: "/a~1b~0c/0/amount" }]);
      expect(body.issues?.[0]?.message).toMatch(/^Expected .*number\.$/);
      expect(answer.text).not.toContain("4242");
    });
  }
});
