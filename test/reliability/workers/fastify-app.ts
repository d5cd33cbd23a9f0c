// The Fastify app a worker serves: POST /payments behind the block's Fastify `idempotent` adapter, the hostile-input
// routes (a path parameter, a signed-in route on the default user lookup) and GET /_stats.
import type { Server } from "node:http";
import Fastify, { type FastifyError, type FastifyRequest } from "fastify";
import { idempotent } from "../../../registry/idempotency/adapters/fastify";
import { InjectedFailure, paymentOperation } from "./payment-operation";
import type { WorkerRuntime } from "./worker-runtime";

/** Fastify's body errors, given the same stable codes as the Express app's, so one test reads both. */
const BODY_ERRORS: Record<string, { status: number; code: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: "BODY_TOO_LARGE" },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: "BODY_INVALID_JSON" },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "BODY_INVALID_JSON" },
};

export async function fastifyServer(runtime: WorkerRuntime): Promise<Server> {
  const app = Fastify({ bodyLimit: runtime.config.bodyLimitBytes ?? 100_000 });
  const charge = paymentOperation(runtime);

  // Tells the test what the block decided for each answer, without trusting the block's own counters.
  app.addHook("onSend", async function exposeOutcome(request, reply, payload) {
    const { outcome, operation } = request.idempotency ?? {};
    if (outcome) reply.header("x-idempotency-outcome", outcome);
    if (operation) reply.header("x-idempotency-operation", operation);
    return payload;
  });
  app.addHook("onRequest", async function authenticate(request: FastifyRequest & { user?: { id: string } }) {
    const id = request.headers["x-user-id"];
    if (typeof id === "string" && request.url.startsWith("/signed-in/")) request.user = { id };
  });
  app.post(
    "/payments",
    idempotent(runtime.handler, {
      getUserId: (request) => String(request.headers["x-user-id"] ?? "u_1"),
      requireKey: true,
      isPermanentError: () => false,
      run: (request) =>
        charge(request.idempotency?.key ?? "", request.idempotency?.userId ?? "", request.body as object),
    }),
  );
  app.post(
    "/accounts/:account/withdrawals",
    idempotent(runtime.handler, {
      getUserId: (request) => String(request.headers["x-user-id"] ?? "u_1"),
      requireKey: true,
      run: (request) =>
        charge(request.idempotency?.key ?? "", request.idempotency?.userId ?? "", request.body as object),
    }),
  );
  app.post(
    "/signed-in/payments",
    idempotent(runtime.handler, {
      allowAnonymous: true,
      requireKey: true,
      run: (request) =>
        charge(request.idempotency?.key ?? "", request.idempotency?.userId ?? "", request.body as object),
    }),
  );
  app.get<{ Querystring: { gc?: string } }>("/_stats", async (request) => runtime.stats(request.query.gc === "1"));

  app.setErrorHandler(function sendError(err: FastifyError, _request, reply) {
    const known =
      err instanceof InjectedFailure
        ? { status: 503, code: "INJECTED_FAILURE" }
        : err.code === "IDEMPOTENCY_SETUP"
          ? { status: 500, code: err.code }
          : BODY_ERRORS[err.code];
    const status = known?.status ?? (err.statusCode && err.statusCode < 500 ? err.statusCode : 500);
    const code = known?.code ?? (status < 500 ? (err.code ?? "BAD_REQUEST") : "INTERNAL_ERROR");
    if (code === "IDEMPOTENCY_SETUP") runtime.logger.warn({ status: "SETUP_ERROR", err }, "idempotency setup error");
    else if (status >= 500 && code !== "INJECTED_FAILURE")
      runtime.logger.error({ status: "ROUTE_ERROR", err }, "route failed");
    if (code === "INJECTED_FAILURE") void reply.header("x-injected-failure", "1");
    return reply.code(status).send({ error: { code, message: err.message } });
  });

  await app.listen({ port: 0, host: "127.0.0.1" });
  return app.server;
}
