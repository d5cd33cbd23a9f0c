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

it("past maxKeys forgets the key written longest ago, not the one added first", async () => {
  const store = new MemoryRateLimitStore({ maxKeys: 2, now: () => 0 });
  await store.take("a", rate);
  await store.take("b", rate);
  await store.take("a", rate); // "a" is written again: "b" is now the stalest
  await store.take("c", rate);
  // "a" kept its count (limit 2, both taken), "b" starts again with a full quota.
  expect((await store.take("a", rate)).allowed).toBe(false);
  expect((await store.take("b", rate)).allowed).toBe(true);
});

it("keeps a key whose quota came back less than a second ago, and drops it after", async () => {
  let now = 0;
  const store = new MemoryRateLimitStore({ now: () => now });
  await store.take("idle", rate); // debt paid at 500 ms
  now = 1_400;
  await store.take("busy", rate);
  expect(store.size).toBe(2);
  now = 1_600;
  await store.take("busy", rate);
  expect(store.size).toBe(1);
});
