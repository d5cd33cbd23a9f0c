// Express, ESM + NodeNext (relative imports need .js), @/* alias inherited through `extends`, a Passport-style
// user type, strict flags, and a `tsc` build script with outDir: add splits out tsconfig.build.json.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "express-nodenext",
  alias: "@/blocks",
  moduleStyle: "nodenext",
  framework: "express",
  jobImport: '"../idempotency-setup.js"',
  dependencies: ["express", "pg"],
  absent: ["ioredis", "prom-client"],
  build: { outDir: "dist" },
});
