#!/usr/bin/env bash
# Generated clients of the OpenAPI document compile and work, and the
# document lints clean (CONTRIBUTING.md, "Generated clients"):
#   - Spectral (spectral:oas): 0 errors, 0 warnings;
#   - oapi-codegen (default settings: models and client) makes a Go client
#     that builds, and calls.go calls operations through it against a
#     server on loopback;
#   - openapi-typescript makes types that `tsc --strict` accepts, with the
#     TypeScript example of docs/api.md.
# Everything generated lives in a temporary folder, never in the checkout.
# Run it alone with: bash internal/clientcheck/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
doc="$repo/fleethttp/openapi.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Pinned tools.
oapi_codegen=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
npm install --prefix "$work/npm" --no-audit --no-fund --silent \
  @stoplight/spectral-cli@6.16.3 openapi-typescript@7.13.0 typescript@5.9.3 >/dev/null
bin="$work/npm/node_modules/.bin"

# Spectral, the OpenAPI ruleset: a warning fails too.
echo 'extends: ["spectral:oas"]' > "$work/.spectral.yaml"
"$bin/spectral" lint "$doc" --ruleset "$work/.spectral.yaml" --fail-severity=warn --format=text
echo "spectral: no errors, no warnings"

# TypeScript: the types, and the example of docs/api.md (the ```ts block
# of its "Generated clients" section), under --strict.
mkdir -p "$work/ts"
"$bin/openapi-typescript" "$doc" -o "$work/ts/fleet.ts" >/dev/null
awk '/^```ts$/ {on=1; next} /^```$/ {on=0} on' docs/api.md > "$work/ts/example.ts"
if [ ! -s "$work/ts/example.ts" ]; then echo "FAIL: docs/api.md has no \`\`\`ts example"; exit 1; fi
"$bin/tsc" --strict --noEmit --target es2022 --module esnext --moduleResolution bundler --lib es2022,dom \
  "$work/ts/fleet.ts" "$work/ts/example.ts"
echo "typescript: the generated types and the example of docs/api.md compile under --strict"

# Go: generate, build, and call operations against a server.
mkdir -p "$work/go/fleetapi"
cat > "$work/go/oapi-codegen.yaml" <<YAML
package: fleetapi
generate:
  models: true
  client: true
output: $work/go/fleetapi/client.gen.go
YAML
go run "$oapi_codegen" -config "$work/go/oapi-codegen.yaml" "$doc"
sed '/^\/\/go:build ignore$/d' internal/clientcheck/calls.go > "$work/go/main.go"
cat > "$work/go/go.mod" <<MOD
module clientcheck

go 1.24

require github.com/fleetkit/fleetapi v0.0.0

replace github.com/fleetkit/fleetapi => $repo
MOD
(cd "$work/go" && go mod tidy -e >/dev/null 2>&1 && go vet ./... && go build -o "$work/calls" .)
"$work/calls"
