#!/usr/bin/env bash
# Regenerates the committed Prisma client (run after upgrading prisma / @prisma/client).
# Generating the Rust-free client never runs Prisma's schema engine, but the CLI still looks for it and
# would try to download it: point it at a stand-in that refuses, so generation works offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stand_in="$(mktemp)"
printf '#!/bin/sh\necho "schema engine not available (stand-in)" >&2\nexit 1\n' > "$stand_in"
chmod +x "$stand_in"
trap 'rm -f "$stand_in"' EXIT
cd "$here/../../../.."
PRISMA_SCHEMA_ENGINE_BINARY="$stand_in" npx prisma generate --schema "$here/schema.prisma"
