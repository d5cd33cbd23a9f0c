// Runs the store contract against MemoryStore, PostgresStore on PGlite and on DATABASE_URL.
import { describeStoreContract } from "../testing/store-contract";
import { allStoreKinds } from "../testing/store-harness";

for (const kind of allStoreKinds) describeStoreContract(kind);
