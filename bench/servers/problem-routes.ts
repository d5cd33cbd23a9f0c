// Hono routes whose error becomes an RFC 9457 problem: through our error-handler's adapter, or through
// hono-problem-details (not on the npm registry: a bundle of its source, built by the parent at bench time).
import { pathToFileURL } from "node:url";
import type { ErrorHandler, Hono } from "hono";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { defineProblem } from "@/blocks/error-handler/define-problem";
import type { PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

/** The same answer both ways: the README's typed problem, thrown once the body is read. */
const CARD_DECLINED = {
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
  detail: "The issuer declined the card.",
};
const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: CARD_DECLINED.status,
  title: CARD_DECLINED.title,
  type: CARD_DECLINED.type,
});

/** What the bench uses of hono-problem-details, as its README shows it. */
type HonoProblemDetails = {
  problemDetailsHandler(): ErrorHandler;
  problemDetails(input: { status: number; title: string; type: string; detail: string }): Error;
};

export async function mountProblemRoute(app: Hono, spec: ServerSpec): Promise<void> {
  if (spec.variant === "error-handler") {
    // The default logger, as the peer's: a 4xx writes no line (ours logs it at info for a logger you pass).
    app.onError(problemDetails({ problems: [CardDeclined] }).onError);
    app.post(ROUTE, async function payment(c) {
      await c.req.json<PaymentBody>();
      throw CardDeclined.create(CARD_DECLINED.detail);
    });
    return;
  }
  if (!spec.peerModule) throw new Error("hono-problem-details needs its bundle (BENCH_HONO_PROBLEM_DETAILS).");
  const peer = (await import(pathToFileURL(spec.peerModule).href)) as HonoProblemDetails;
  app.onError(peer.problemDetailsHandler());
  app.post(ROUTE, async function payment(c) {
    await c.req.json<PaymentBody>();
    throw peer.problemDetails(CARD_DECLINED);
  });
}
