// `blocks migrate` for a project whose idempotency store is DynamoDB: the table's JSON files, and --apply on dynalite.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CreateTableCommand, DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { runMigrate } from "../../cli/commands/migrate.js";
import { dynamoDbTableDefinition } from "../../registry/idempotency/stores/dynamodb-table.js";
import { startLocalDynamoDb, type LocalDynamoDb } from "../idempotency/support/local-dynamodb.js";
import { rejection, tempProject } from "./helpers.js";

const REPO = path.resolve(import.meta.dirname, "../..");

/** A project after `blocks add idempotency --store dynamodb`: the lock records the store's files; `sdk` links the AWS SDK in. */
function dynamoDbProject({ sdk = true } = {}): string {
  const dir = tempProject("hono-bundler");
  const files = Object.fromEntries(
    ["index.ts", "stores/dynamodb-store.ts", "stores/dynamodb-table.ts"].map((file) => [
      `src/blocks/idempotency/${file}`,
      "sha256-x",
    ]),
  );
  const lock = {
    version: 1,
    blocks: { idempotency: { version: "0.0.0", frameworks: ["hono"], tests: true, files } },
    migrations: {},
  };
  writeFileSync(path.join(dir, "blocks.lock.json"), JSON.stringify(lock));
  if (sdk) {
    mkdirSync(path.join(dir, "node_modules"));
    symlinkSync(path.join(REPO, "node_modules/@aws-sdk"), path.join(dir, "node_modules/@aws-sdk"), "dir");
  }
  return dir;
}

const json = (dir: string, file: string) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as unknown;
let n = 0;
const uniqueTable = () => `idem_cli_${process.pid}_${++n}`;

describe("blocks migrate, DynamoDB store", () => {
  let local: LocalDynamoDb;
  beforeAll(async () => void (local = await startLocalDynamoDb()));
  afterAll(() => local?.close());
  // The AWS SDK's default chain, kept off this machine's own profiles and instance metadata.
  beforeEach(() => {
    vi.stubEnv("AWS_REGION", "local");
    vi.stubEnv("AWS_ACCESS_KEY_ID", "local");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "local");
    vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent/aws-config");
    vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials");
    vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  });
  afterEach(() => void vi.unstubAllEnvs());

  it("writes the block's CreateTable and UpdateTimeToLive inputs as JSON, instead of SQL, and finds them again", async () => {
    const dir = dynamoDbProject();
    const first = await runMigrate({ cwd: dir, block: "idempotency" });
    const paths = [
      "dynamodb/idempotency_records.create-table.json",
      "dynamodb/idempotency_records.update-time-to-live.json",
    ];
    expect(first.written).toEqual(paths);
    const { createTable, updateTimeToLive } = dynamoDbTableDefinition("idempotency_records");
    expect([json(dir, paths[0]!), json(dir, paths[1]!)]).toEqual([createTable, updateTimeToLive]);
    expect(existsSync(path.join(dir, "migrations"))).toBe(false);
    const second = await runMigrate({ cwd: dir, block: "idempotency" });
    expect(second).toMatchObject({ written: [], existing: [paths[0]] });
  });

  it("--print writes nothing and prints both inputs as one JSON document", async () => {
    const dir = dynamoDbProject();
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      await runMigrate({ cwd: dir, block: "idempotency", table: "payments-idempotency", print: true });
    } finally {
      write.mockRestore();
    }
    expect(JSON.parse(out.join(""))).toEqual(dynamoDbTableDefinition("payments-idempotency"));
    expect(existsSync(path.join(dir, "dynamodb"))).toBe(false);
  });

  it("--store postgres gives the SQL migration back; an unknown store is refused", async () => {
    const dir = dynamoDbProject();
    const sql = await runMigrate({ cwd: dir, block: "idempotency", store: "postgres" });
    expect(sql.written).toEqual([expect.stringMatching(/^migrations\/\d+_create_idempotency_records\.sql$/)]);
    expect((await rejection(runMigrate({ cwd: dir, block: "idempotency", store: "mongodb" }))).code).toBe(
      "INVALID_OPTION",
    );
  });

  it("refuses a table name DynamoDB would refuse", async () => {
    expect(
      (await rejection(runMigrate({ cwd: dynamoDbProject(), block: "idempotency", table: "no spaces allowed" }))).code,
    ).toBe("INVALID_TABLE_NAME");
  });

  it("--apply creates the table with the store's key and sparse index, says TTL could not be enabled on dynalite, and a second run changes nothing", async () => {
    const dir = dynamoDbProject();
    const table = uniqueTable();
    const first = await runMigrate({ cwd: dir, block: "idempotency", table, apply: true, endpoint: local.endpoint });
    expect(first.applied).toEqual([
      {
        table,
        alreadyApplied: false,
        ttl: "not enabled",
        ttlError: expect.stringMatching(/TimeToLive|UnknownOperation/),
      },
    ]);
    const { Table } = await local.client.send(new DescribeTableCommand({ TableName: table }));
    expect(Table).toMatchObject({ TableStatus: "ACTIVE", KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }] });
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual(["processing"]);
    const second = await runMigrate({ cwd: dir, block: "idempotency", table, apply: true, endpoint: local.endpoint });
    expect(second).toMatchObject({ written: [], applied: [{ table, alreadyApplied: true }] });
  });

  it("--apply takes the endpoint from AWS_ENDPOINT_URL_DYNAMODB", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", local.endpoint);
    const table = uniqueTable();
    await runMigrate({ cwd: dynamoDbProject(), block: "idempotency", table, apply: true });
    expect((await local.client.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus).toBe("ACTIVE");
  });

  it("--apply refuses a table that exists with another key, naming the difference", async () => {
    const table = uniqueTable();
    await local.client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      }),
    );
    const error = await rejection(
      runMigrate({ cwd: dynamoDbProject(), block: "idempotency", table, apply: true, endpoint: local.endpoint }),
    );
    expect(error.code).toBe("MIGRATION_FAILED");
    expect(error.message).toContain(
      `Table ${table} already exists with another schema: key [["id","HASH"]] instead of [["pk","HASH"]]; no index "processing"`,
    );
  });

  it.each([
    ["region", "AWS_REGION"],
    ["credentials", "AWS_ACCESS_KEY_ID"],
  ])("--apply without an AWS %s says what to configure", async (what, variable) => {
    vi.stubEnv(variable, undefined);
    const error = await rejection(
      runMigrate({
        cwd: dynamoDbProject(),
        block: "idempotency",
        table: uniqueTable(),
        apply: true,
        endpoint: local.endpoint,
      }),
    );
    expect([error.code, error.message]).toEqual(["MISSING_AWS_CONFIG", `No AWS ${what} found for --apply.`]);
    expect(error.suggestion).toContain("AWS_REGION");
  });

  it("--apply names an endpoint it cannot reach", async () => {
    const error = await rejection(
      runMigrate({ cwd: dynamoDbProject(), block: "idempotency", apply: true, endpoint: "http://127.0.0.1:1" }),
    );
    expect([error.code, error.message]).toEqual([
      "MIGRATION_FAILED",
      "Could not reach DynamoDB at http://127.0.0.1:1.",
    ]);
  });

  it("--apply asks for @aws-sdk/client-dynamodb when the project does not have it: the CLI brings no AWS package", async () => {
    const error = await rejection(
      runMigrate({ cwd: dynamoDbProject({ sdk: false }), block: "idempotency", apply: true, endpoint: local.endpoint }),
    );
    expect(error.code).toBe("MISSING_DEPENDENCY");
    expect(error.message).toContain("@aws-sdk/client-dynamodb");
  });
});
