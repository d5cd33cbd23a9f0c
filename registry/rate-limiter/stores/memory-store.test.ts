import { expect, it } from "vitest";
import { rateOf } from "../gcra";
import { MemoryRateLimitStore } from "./memory-store";

const rate = rateOf({ name: "p", limit: 2, windowMs: 1_000 });

it("forgets keys whose quota is whole again, so idle keys cost no memory", async () => {
  let now = 0;
  const store = new MemoryRateLimitStore({ now: () => now });
  for (let i = 0; i < 3; i++) await store.take(`k${i}`, rate);
  now = 10_000;
  await store.take("fresh", rate);
  await store.take("fresh", rate);
  expect(store.size).toBe(1);
});

it("holds at most maxKeys, dropping the stalest", async () => {
  const store = new MemoryRateLimitStore({ maxKeys: 2, now: () => 0 });
  for (const key of ["a", "b", "c"]) await store.take(key, rate);
  expect(store.size).toBe(2);
  // "a" was forgotten: it starts again with a full quota.
  expect((await store.take("a", rate)).allowed).toBe(true);
  expect((await store.take("a", rate)).allowed).toBe(true);
});
