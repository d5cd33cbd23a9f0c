// The error handler's review findings, each reproduced with the real packages' errors through a real app.
import { createServer } from "node:http";
import { type } from "arktype";
import axios from "axios";
import express from "express";
import Fastify from "fastify";
import { got } from "got";
import { Hono } from "hono";
import { Agent, interceptors, request as undiciRequest } from "undici";
import * as v from "valibot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseRequest } from "@/blocks/error-handler";
import { problemDetails as expressProblemDetails } from "@/blocks/error-handler/adapters/express";
import { problemDetailsPlugin } from "@/blocks/error-handler/adapters/fastify";
import { problemDetails as honoProblemDetails } from "@/blocks/error-handler/adapters/hono";
import { IdempotencyHandler } from "@/blocks/idempotency";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { idempotent } from "@/blocks/idempotency/adapters/express";
import { idempotencyPlugin } from "@/blocks/idempotency/adapters/fastify";
import { deferred } from "@/blocks/idempotency/testing/deferred";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";
import { answerOf, baseUrlOf, sendTo, serveDuringSuite } from "./support/http";
import { expectProblem } from "./support/scenarios";

const PROVIDER_SECRET = "Invalid API key sk_live_provider_key";

/** The payment provider: answers /status/<n> with that status and a message our client must never see. */
const provider = createServer((req, res) => {
  const status = Number(req.url?.split("/")[2] ?? 500);
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ message: PROVIDER_SECRET, risk_score_internal: 0.97 }));
});
let providerUrl = "";
beforeAll(async () => {
  providerUrl = await baseUrlOf(provider.listen(0, "127.0.0.1"));
});
afterAll(() => new Promise((resolve) => provider.close(resolve)));

/** How a route calls the provider with each client; each rejects (or throws) on a non-2xx answer. */
const CLIENTS: Record<string, (status: string) => Promise<unknown>> = {
  axios: (status) => axios.get(`${providerUrl}/status/${status}`),
  got: (status) => got(`${providerUrl}/status/${status}`, { retry: { limit: 0 } }),
  undici: (status) =>
    undiciRequest(`${providerUrl}/status/${status}`, { dispatcher: new Agent().compose(interceptors.responseError()) }),
  fetch: async (status) => {
    const res = await fetch(`${providerUrl}/status/${status}`);
    if (!res.ok)
      throw Object.assign(new Error(`provider answered ${res.status}: ${await res.text()}`), { status: res.status });
    return res;
  },
};

const ProviderAnswer = z.object({ id: z.string(), risk_score_internal: z.string() });
const CardBody = v.object({ card: v.object({ number: v.pipe(v.string(), v.regex(/^\d{16}$/)) }) });
const RefundBody = type({ currency: "'EUR' | 'USD'" });

describe("the error handler trusts any error's status", () => {
  const { logger, lines } = captureLogs();
  const app = express();
  app.get("/charge/:client/:status", async (req) => {
    await CLIENTS[req.params.client]?.(req.params.status);
  });
  const problems = expressProblemDetails({ logger });
  app.use(problems.onError);
  const send = sendTo(serveDuringSuite(() => app.listen(0, "127.0.0.1")));

  for (const client of Object.keys(CLIENTS)) {
    it.each(["401", "404", "422"])(
      `${client}: the provider's %s goes to our client as a 500, its message only in the log`,
      async (status) => {
        const answer = await send("GET", `/charge/${client}/${status}`);
        const body = expectProblem(answer, lines, { status: 500, code: "INTERNAL_ERROR" });
        expect(answer.text).not.toMatch(/sk_live|risk_score|status code/);
        expect(lines.find((line) => line.requestId === body.requestId && line.level === "error")?.error).toMatchObject({
          status: Number(status),
        });
      },
    );
  }
});

describe("any error with an `issues` array is the client's validation error", () => {
  const { logger, lines } = captureLogs();
  const app = new Hono();
  const problems = honoProblemDetails({ logger });
  app.onError(problems.onError);
  app.post("/payments", async () => {
    const res = await fetch(`${providerUrl}/status/200`);
    return Response.json(ProviderAnswer.parse(await res.json()));
  });
  app.post("/cards", async (c) => Response.json(v.parse(CardBody, await c.req.json())));
  app.post("/cards/checked", async (c) => Response.json(await parseRequest(CardBody, await c.req.json())));
  app.post("/refunds", async (c) => Response.json(await parseRequest(RefundBody, await c.req.json())));
  const post = async (path: string, body: unknown) =>
    answerOf(await app.request(path, { method: "POST", body: JSON.stringify(body) }));

  it("zod: the provider's answer failing our internal schema is a 500 that describes nothing", async () => {
    const answer = await post("/payments", {});
    expectProblem(answer, lines, { status: 500, code: "INTERNAL_ERROR" });
    expect(answer.text).not.toMatch(/risk_score_internal|invalid_type/);
  });

  it("valibot: an unmarked ValiError is a 500; through parseRequest, a 422 whose issues never quote the card number", async () => {
    const card = { card: { number: "4242 4242 4242 4242" } };
    const unmarked = await post("/cards", card);
    expectProblem(unmarked, lines, { status: 500, code: "INTERNAL_ERROR" });
    const checked = await post("/cards/checked", card);
    const body = expectProblem(checked, lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toEqual([
      { path: ["card", "number"], pointer: "/card/number", message: "Expected /^\\d{16}$/.", code: "regex" },
    ]);
    expect(unmarked.text + checked.text + JSON.stringify(lines)).not.toContain("4242");
  });

  it("arktype: its 'was' is left out", async () => {
    const answer = await post("/refunds", { currency: "card 4242424242424242" });
    const body = expectProblem(answer, lines, { status: 422, code: "VALIDATION_FAILED" });
    expect(body.issues).toMatchObject([{ path: ["currency"], pointer: "/currency" }]);
    expect(answer.text).not.toContain("4242");
  });
});

describe("a route's statusMap 425 still comes out 409", () => {
  const statusMap = { REQUEST_IN_PROGRESS: 425 } as const;

  describe('express, errors: "throw"', () => {
    const { logger, lines } = captureLogs();
    const entered = deferred();
    const release = deferred();
    const app = express();
    app.post(
      "/payments",
      express.json(),
      idempotent(new IdempotencyHandler(new MemoryStore()), {
        getUserId: () => "u_1",
        errors: "throw",
        statusMap,
        run: async () => {
          entered.resolve();
          await release.promise;
          return { status: 201, body: { id: "pay_1" } };
        },
      }),
    );
    app.use(expressProblemDetails({ logger }).onError);
    const baseUrl = serveDuringSuite(() => app.listen(0, "127.0.0.1"));
    const post = async () =>
      answerOf(
        await fetch(`${baseUrl()}/payments`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": "k-425" },
          body: "{}",
        }),
      );

    it("the duplicate gets the route's 425", async () => {
      const first = post();
      await entered.promise;
      expectProblem(await post(), lines, { status: 425, code: "REQUEST_IN_PROGRESS" });
      release.resolve();
      expect((await first).status).toBe(201);
    });
  });

  describe("fastify, formatAnsweredErrors", () => {
    const { logger, lines } = captureLogs();
    const entered = deferred();
    const release = deferred();
    const app = Fastify({ genReqId: () => crypto.randomUUID() });
    beforeAll(async () => {
      await app.register(problemDetailsPlugin, { logger, formatAnsweredErrors: true });
      await app.register(idempotencyPlugin, {
        handler: new IdempotencyHandler(new MemoryStore()),
        getUserId: () => "u_1",
      });
      app.post("/payments", { config: { idempotency: { statusMap } } }, async (_request, reply) => {
        entered.resolve();
        await release.promise;
        return reply.code(201).send({ id: "pay_1" });
      });
    });
    afterAll(() => app.close());
    const post = async () => {
      const res = await app.inject({
        method: "POST",
        url: "/payments",
        headers: { "idempotency-key": "k-425" },
        payload: {},
      });
      return {
        status: res.statusCode,
        headers: Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, String(value)])),
        text: res.body,
      };
    };

    it("the duplicate gets the route's 425", async () => {
      const first = post();
      await entered.promise;
      expectProblem(await post(), lines, { status: 425, code: "REQUEST_IN_PROGRESS" });
      release.resolve();
      expect((await first).status).toBe(201);
    });
  });
});
