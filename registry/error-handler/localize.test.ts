import { describe, expect, it } from "vitest";
import { localizeFrom, negotiateLanguage, withVary } from "./localize";
import { createProblemHandler } from "./problem";
import { captureLogger } from "./testing/capture-logger";

describe("negotiateLanguage", () => {
  it("takes the client's best weighted language that is available, a region falling back to its language", () => {
    expect(negotiateLanguage("fr;q=0.4, de-CH, en;q=0.8", ["en", "de"])).toBe("de");
    expect(negotiateLanguage("fr, en;q=0.1", ["en", "de"])).toBe("en");
    expect(negotiateLanguage("fr, de;q=0", ["de"])).toBeUndefined();
    expect(negotiateLanguage(undefined, ["de"])).toBeUndefined();
  });
});

describe("localize", () => {
  const localize = localizeFrom({
    de: {
      CARD_DECLINED: { title: "Karte abgelehnt", detail: "Die Bank hat die Karte abgelehnt." },
      "404": { title: "Nicht gefunden" },
    },
  });
  const toProblem = createProblemHandler({
    logger: captureLogger().logger,
    localize,
    statuses: { CARD_DECLINED: 402 },
  });

  it("translates by code, else by status, and says the language", () => {
    const declined = toProblem(Object.assign(new Error("Declined by the issuer."), { code: "CARD_DECLINED" }), {
      requestId: "r",
      acceptLanguage: "de-DE",
    });
    expect(declined.body).toMatchObject({
      code: "CARD_DECLINED",
      title: "Karte abgelehnt",
      detail: "Die Bank hat die Karte abgelehnt.",
    });
    const notFound = toProblem(
      { code: "NOT_FOUND", message: "No route." },
      { requestId: "r", acceptLanguage: "de-DE" },
    );
    expect(notFound.body.title).toBe("Nicht gefunden");
    expect(notFound.headers).toMatchObject({ "content-language": "de", vary: "Accept-Language" });
  });

  it("leaves the problem alone for a language it has no translation for, or when the translation throws", () => {
    expect(
      toProblem({ code: "NOT_FOUND", message: "No route." }, { requestId: "r", acceptLanguage: "fr" }).body.title,
    ).toBe("Not Found");
    const failing = createProblemHandler({
      logger: captureLogger().logger,
      localize: () => {
        throw new Error("catalog missing");
      },
    });
    expect(
      failing({ code: "NOT_FOUND", message: "No route." }, { requestId: "r", acceptLanguage: "de" }).body.title,
    ).toBe("Not Found");
  });
});

describe("withVary", () => {
  it("keeps the Vary a middleware already set (CORS's Origin), once", () => {
    expect(withVary({ vary: "Accept-Language" }, "Origin")).toEqual({ vary: "Origin, Accept-Language" });
    expect(withVary({ vary: "Accept-Language" }, "origin, accept-language")).toEqual({
      vary: "origin, accept-language",
    });
    expect(withVary({ vary: "Accept-Language" }, undefined)).toEqual({ vary: "Accept-Language" });
    expect(withVary({ "content-type": "application/problem+json" }, "Origin")).toEqual({
      "content-type": "application/problem+json",
    });
  });
});
