// The Express app a worker serves: POST /payments (wrapper style), POST /captured (capture style), the hostile-input
// routes (a path parameter, a signed-in route on the default user lookup) and GET /_stats.
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { idempotency, idempotent } from "../../../registry/idempotency/adapters/express";
import { InjectedFailure, paymentOperation } from "./payment-operation";
import type { WorkerRuntime } from "./worker-runtime";

export function expressApp(runtime: WorkerRuntime) {
  const app = express();
  const charge = paymentOperation(runtime);

  app.post(
    "/payments",
    exposeOutcome,
    express.json({ limit: runtime.config.bodyLimitBytes ?? 100_000 }),
    idempotent(runtime.handler, {
      getUserId: (req) => req.get("x-user-id") ?? "u_1",
      requireKey: true,
      isPermanentError: () => false,
      run: (req) => {
        const context = req.res?.locals.idempotency;
        return charge(context?.key ?? "", context?.userId ?? "", req.body);
      },
    }),
  );
  // The same operation in capture style: the adapter records what an ordinary route sends.
  app.post(
    "/captured",
    exposeOutcome,
    express.json({ limit: runtime.config.bodyLimitBytes ?? 100_000 }),
    idempotency(runtime.handler, { getUserId: (req) => req.get("x-user-id") ?? "u_1", requireKey: true }),
    async function capturedPayment(req, res) {
      const context = res.locals.idempotency;
      const { status, body } = await charge(context?.key ?? "", context?.userId ?? "", req.body);
      res.status(status).json(body);
    },
  );
  // A path parameter: the fingerprint covers the concrete path, the operation only the template.
  app.post(
    "/accounts/:account/withdrawals",
    exposeOutcome,
    express.json({ limit: runtime.config.bodyLimitBytes ?? 100_000 }),
    idempotent(runtime.handler, {
      getUserId: (req) => req.get("x-user-id") ?? "u_1",
      requireKey: true,
      run: (req) => charge(req.res?.locals.idempotency?.key ?? "", req.res?.locals.idempotency?.userId ?? "", req.body),
    }),
  );
  // The default user lookup: the user an auth step sets, and never the anonymous scope for a request with credentials.
  app.post(
    "/signed-in/payments",
    exposeOutcome,
    express.json({ limit: runtime.config.bodyLimitBytes ?? 100_000 }),
    function authenticate(req: express.Request & { user?: { id: string } }, _res, next) {
      const id = req.get("x-user-id");
      if (id) req.user = { id };
      next();
    },
    idempotent(runtime.handler, {
      allowAnonymous: true,
      requireKey: true,
      run: (req) => charge(req.res?.locals.idempotency?.key ?? "", req.res?.locals.idempotency?.userId ?? "", req.body),
    }),
  );
  app.get("/_stats", (req, res) => void res.json(runtime.stats(req.query.gc === "1")));

  const sendError: ErrorRequestHandler = function sendError(err, _req, res, _next) {
    const { status, code } = describeError(err);
    if (code === "IDEMPOTENCY_SETUP") runtime.logger.warn({ status: "SETUP_ERROR", err }, "idempotency setup error");
    else if (status >= 500 && code !== "INJECTED_FAILURE")
      runtime.logger.error({ status: "ROUTE_ERROR", err }, "route failed");
    if (code === "INJECTED_FAILURE") res.setHeader("x-injected-failure", "1");
    res.status(status).json({ error: { code, message: String(err?.message ?? err) } });
  };
  app.use(sendError);
  return app;
}

/** Tells the test what the block decided for each answer, without trusting the block's own counters. */
const exposeOutcome: RequestHandler = function exposeOutcome(_req, res, next) {
  const writeHead = res.writeHead;
  res.writeHead = function writeHeadWithOutcome(this: typeof res, ...args: Parameters<typeof writeHead>) {
    const { outcome, operation } = res.locals.idempotency ?? {};
    if (outcome && !res.headersSent) res.setHeader("x-idempotency-outcome", outcome);
    if (operation && !res.headersSent) res.setHeader("x-idempotency-operation", operation);
    return writeHead.apply(this, args);
  } as typeof writeHead;
  next();
};

/** body-parser's errors carry `type` and `status`; give every 4xx a stable code, as a real app's error handler would. */
function describeError(err: unknown): { status: number; code: string } {
  if (err instanceof InjectedFailure) return { status: 503, code: "INJECTED_FAILURE" };
  if ((err as { code?: unknown })?.code === "IDEMPOTENCY_SETUP") return { status: 500, code: "IDEMPOTENCY_SETUP" };
  const { type, status } = (err ?? {}) as { type?: string; status?: number };
  if (type === "entity.too.large") return { status: 413, code: "BODY_TOO_LARGE" };
  if (type === "entity.parse.failed") return { status: 400, code: "BODY_INVALID_JSON" };
  if (typeof status === "number" && status >= 400 && status < 500)
    return { status, code: (type ?? "BAD_REQUEST").toUpperCase().replace(/\W/g, "_") };
  return { status: 500, code: "INTERNAL_ERROR" };
}
