// `blocks migrate --apply` for a DynamoDB store, through the built CLI, on dynalite: the SDK comes from the project.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalDynamoDb, type LocalDynamoDb } from "../idempotency/support/local-dynamodb.js";
import { blocks, copyFixture, REPO } from "./harness.js";

describe("blocks migrate --apply, DynamoDB store", () => {
  const project = copyFixture("hono-bundler");
  const table = `blocks_e2e_${process.pid}`;
  const aws = {
    AWS_REGION: "local",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_EC2_METADATA_DISABLED: "true",
  };
  let local: LocalDynamoDb;
  beforeAll(async () => {
    local = await startLocalDynamoDb();
    // What `blocks add idempotency --store dynamodb` leaves: the store's files in the lock, the AWS SDK in node_modules.
    const files = { "src/blocks/idempotency/stores/dynamodb-table.ts": "sha256-x" };
    writeFileSync(
      path.join(project.dir, "blocks.lock.json"),
      JSON.stringify({
        version: 1,
        blocks: { idempotency: { version: "0.0.0", frameworks: ["hono"], tests: true, files } },
        migrations: {},
      }),
    );
    mkdirSync(path.join(project.dir, "node_modules"));
    symlinkSync(path.join(REPO, "node_modules/@aws-sdk"), path.join(project.dir, "node_modules/@aws-sdk"), "dir");
  });
  afterAll(async () => {
    project.remove();
    await local?.close();
  });

  it("writes the table's JSON files, creates the table, warns that dynalite cannot enable TTL, and a second run changes nothing", async () => {
    const args = ["migrate", "idempotency", "--apply", "--table", table, "--endpoint", local.endpoint];
    const first = await blocks(project.dir, args, aws);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Wrote dynamodb/${table}.create-table.json`);
    expect(first.stdout).toContain(`DynamoDB table ${table}: created.`);
    expect(first.stdout + first.stderr).toContain(`TTL could not be enabled`);
    expect(first.stdout + first.stderr).toContain(
      `aws dynamodb update-time-to-live --cli-input-json file://dynamodb/${table}.update-time-to-live.json`,
    );
    expect((await local.client.send(new DescribeTableCommand({ TableName: table }))).Table?.KeySchema).toEqual([
      { AttributeName: "pk", KeyType: "HASH" },
    ]);
    const second = await blocks(project.dir, [...args, "--json"], aws);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({
      written: [],
      applied: [{ table, alreadyApplied: true, ttl: "not enabled" }],
    });
  });

  it("names the missing region, as JSON with --json", async () => {
    const run = await blocks(
      project.dir,
      ["migrate", "idempotency", "--apply", "--endpoint", local.endpoint, "--json"],
      { ...aws, AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined, AWS_CONFIG_FILE: "/nonexistent" },
    );
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      error: { code: "MISSING_AWS_CONFIG", message: "No AWS region found for --apply." },
    });
  });
});
